package storetest

import (
	"testing"

	"platformapi/shared/adapters/store"
)

var updateRules = []rule{
	{"UpdateOfAbsentItemCreatesItFromKeySetAndAdd", func(t *testing.T, s store.Store) {
		got, err := s.Update(ctx(t), key("a"), store.Update{
			Set: map[string]any{"s": "v"}, Add: map[string]int64{"n": 3}, Remove: []string{"gone"},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := item(key("a"), "s", "v", "n", int64(3))
		wantAttrs(t, got, want)
		wantAttrs(t, mustGet(t, s, key("a")), want)
	}},
	{"UpdateReturnsTheItemAsItIsAfterwards", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "keep", true, "n", int64(10), "drop", "x"))
		got, err := s.Update(ctx(t), key("a"), store.Update{
			Set: map[string]any{"s": "new"}, Add: map[string]int64{"n": -4}, Remove: []string{"drop"},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := item(key("a"), "keep", true, "n", int64(6), "s", "new")
		wantAttrs(t, got, want)
		wantAttrs(t, mustGet(t, s, key("a")), want)
	}},
	{"UpdateAddStartsAMissingAttributeAtZero", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "s", "v"))
		got, err := s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"n": -2}})
		if err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, got, item(key("a"), "s", "v", "n", int64(-2)))
	}},
	{"AFencedUpdateSentAgainAfterItAppliedAnswersAppliedAndCountsOnce", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "n", int64(0), "other", int64(5)))
		u := store.Update{Add: map[string]int64{"n": 1}, Set: map[string]any{"f": int64(5)}}
		for range 2 { // the second send is the SDK's resend of a lost answer
			got, err := s.Update(ctx(t), key("a"), u, store.Fence("f", 5), store.NumBelow("n", 10))
			if err != nil {
				t.Fatal(err)
			}
			wantAttrs(t, got, item(key("a"), "n", int64(1), "other", int64(5), "f", int64(5)))
		}
		// A late copy of an older write finds a greater value, and a fence
		// the update does not set to its value proves nothing: both are
		// refused.
		_, err := s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"n": 1}, Set: map[string]any{"f": int64(4)}},
			store.Fence("f", 4))
		wantCondFailed(t, err)
		_, err = s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"n": 1}}, store.Fence("f", 5))
		wantCondFailed(t, err)
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "n", int64(1), "other", int64(5), "f", int64(5)))
	}},
	{"AFencedUpdateBelowItsFenceAppliesAndAboveIsRefused", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "f", int64(3)))
		_, err := s.Update(ctx(t), key("a"), store.Update{Set: map[string]any{"f": int64(2)}}, store.Fence("f", 2))
		wantCondFailed(t, err)
		got, err := s.Update(ctx(t), key("a"), store.Update{Set: map[string]any{"f": int64(4)}}, store.Fence("f", 4))
		if err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, got, item(key("a"), "f", int64(4)))
	}},
	{"UpdateAddRefusesNonNumericAttribute", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "s", "v"))
		_, err := s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"s": 1}})
		wantInvalid(t, err)
	}},
	{"UpdateRefusesKeyAttributesAndUnsupportedValues", func(t *testing.T, s store.Store) {
		for _, u := range []store.Update{
			{Set: map[string]any{store.AttrPK: "other"}},
			{Set: map[string]any{store.AttrSK: "other"}},
			{Remove: []string{store.AttrSK}},
			{Set: map[string]any{"v": 1.5}},
			{Set: map[string]any{"n": "x"}, Add: map[string]int64{"n": 1}},
		} {
			_, err := s.Update(ctx(t), key("a"), u)
			wantInvalid(t, err)
		}
		wantNotFound(t, s, key("a"))
	}},
	{"UpdateCanSetAndClearExpiry", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "s", "v"))
		if _, err := s.Update(ctx(t), key("a"), store.Update{Set: map[string]any{store.AttrExpiresAt: past()}}); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, s, key("a"))
		mustPut(t, s, item(key("b"), "expiresAt", future()))
		if _, err := s.Update(ctx(t), key("b"), store.Update{Remove: []string{store.AttrExpiresAt}}); err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, mustGet(t, s, key("b")), item(key("b")))
	}},
}

var deleteRules = []rule{
	{"DeleteRemovesTheItem", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a")))
		if err := s.Delete(ctx(t), key("a")); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, s, key("a"))
	}},
	{"DeleteOfAbsentItemSucceeds", func(t *testing.T, s store.Store) {
		if err := s.Delete(ctx(t), key("absent")); err != nil {
			t.Fatal(err)
		}
	}},
	{"ConditionalDeleteKeepsItemWhenConditionFails", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "owner", "me"))
		wantCondFailed(t, s.Delete(ctx(t), key("a"), store.AttrEquals("owner", "you")))
		mustGet(t, s, key("a"))
	}},
}
