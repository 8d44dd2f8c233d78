package storetest

import (
	"fmt"
	"testing"

	"platformapi/shared/adapters/store"
)

// condCase is one condition against one stored state. state nil means the
// item is absent.
type condCase struct {
	name  string
	state store.Item
	cond  store.Cond
	holds bool
}

func condCases() []condCase {
	k := key("c")
	live := item(k, "s", "v", "n", int64(5), "t", true, "b", []byte{1, 2})
	expired := item(k, "s", "v", "n", int64(5), "expiresAt", past())
	return []condCase{
		{"ExistsHoldsOnLiveItem", live, store.Exists(), true},
		{"ExistsFailsOnAbsentItem", nil, store.Exists(), false},
		{"ExistsFailsOnExpiredItem", expired, store.Exists(), false},
		{"NotExistsHoldsOnAbsentItem", nil, store.NotExists(), true},
		{"NotExistsHoldsOnExpiredItem", expired, store.NotExists(), true},
		{"NotExistsFailsOnLiveItem", live, store.NotExists(), false},
		{"NotExistsFailsOnItemExpiringLater", item(k, "expiresAt", future()), store.NotExists(), false},
		{"NotExistsFailsOnItemWithZeroExpiry", item(k, "expiresAt", int64(0)), store.NotExists(), false},
		{"AttrEqualsHoldsOnSameString", live, store.AttrEquals("s", "v"), true},
		{"AttrEqualsFailsOnOtherString", live, store.AttrEquals("s", "w"), false},
		{"AttrEqualsHoldsOnSameInt", live, store.AttrEquals("n", int64(5)), true},
		{"AttrEqualsFailsOnSameDigitsOfAnotherType", live, store.AttrEquals("n", "5"), false},
		{"AttrEqualsHoldsOnSameBool", live, store.AttrEquals("t", true), true},
		{"AttrEqualsHoldsOnSameBytes", live, store.AttrEquals("b", []byte{1, 2}), true},
		{"AttrEqualsFailsOnOtherBytes", live, store.AttrEquals("b", []byte{1, 3}), false},
		{"AttrEqualsFailsOnMissingAttribute", live, store.AttrEquals("missing", "v"), false},
		{"AttrEqualsFailsOnAbsentItem", nil, store.AttrEquals("s", "v"), false},
		{"AttrEqualsFailsOnExpiredItem", expired, store.AttrEquals("s", "v"), false},
		{"AttrNotExistsHoldsOnMissingAttribute", live, store.AttrNotExists("missing"), true},
		{"AttrNotExistsFailsOnPresentAttribute", live, store.AttrNotExists("s"), false},
		{"AttrNotExistsHoldsOnAbsentItem", nil, store.AttrNotExists("s"), true},
		{"AttrNotExistsHoldsOnExpiredItem", expired, store.AttrNotExists("s"), true},
		{"NumBelowHoldsUnderTheBound", live, store.NumBelow("n", 6), true},
		{"NumBelowFailsAtTheBound", live, store.NumBelow("n", 5), false},
		{"NumBelowCountsMissingAttributeAsZero", live, store.NumBelow("missing", 1), true},
		{"NumBelowSeesZeroOnAbsentItem", nil, store.NumBelow("n", 100), true},
		{"NumBelowZeroFailsOnAbsentItem", nil, store.NumBelow("n", 0), false},
		{"NumBelowSeesZeroOnExpiredItem", expired, store.NumBelow("n", 1), true},
		{"NumAtLeastHoldsAtTheBound", live, store.NumAtLeast("n", 5), true},
		{"NumAtLeastFailsUnderTheBound", live, store.NumAtLeast("n", 6), false},
		{"NumAtLeastCountsMissingAttributeAsZero", live, store.NumAtLeast("missing", 0), true},
		{"NumAtLeastSeesZeroOnAbsentItem", nil, store.NumAtLeast("n", 1), false},
		{"NumAtLeastZeroHoldsOnAbsentItem", nil, store.NumAtLeast("n", 0), true},
	}
}

// conditionRules check every condition form through every conditional write,
// so no write path can evaluate a condition differently.
var conditionRules = []rule{
	{"ConditionsBehaveAlikeOnPutUpdateDeleteAndTransact", func(t *testing.T, s store.Store) {
		for i, c := range condCases() {
			for _, w := range writers {
				t.Run(c.name+"/"+w.name, func(t *testing.T) {
					k := store.Key{PK: fmt.Sprintf("cond#%d", i), SK: w.name}
					if c.state != nil {
						st := store.Item{}
						for n, v := range c.state {
							st[n] = v
						}
						st[store.AttrPK], st[store.AttrSK] = k.PK, k.SK
						mustPut(t, s, st)
					}
					err := w.write(t, s, k, c.cond)
					if c.holds && err != nil {
						t.Fatalf("write under %v = %v; want success", c.cond, err)
					}
					if !c.holds {
						wantCondFailed(t, err)
					}
				})
			}
		}
	}},
	{"ConditionalPutRefusesExistingItem", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "v", "first"))
		wantCondFailed(t, s.Put(ctx(t), item(key("a"), "v", "second"), store.NotExists()))
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "v", "first"))
	}},
	{"FailedConditionLeavesItemUnchanged", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "n", int64(1)))
		_, err := s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"n": 1}, Set: map[string]any{"x": "y"}},
			store.NumAtLeast("n", 2))
		wantCondFailed(t, err)
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "n", int64(1)))
	}},
	{"ConditionsAreANDed", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "s", "v", "n", int64(3)))
		wantCondFailed(t, s.Put(ctx(t), item(key("a")), store.AttrEquals("s", "v"), store.NumBelow("n", 3)))
		if err := s.Put(ctx(t), item(key("a")), store.AttrEquals("s", "v"), store.NumBelow("n", 4)); err != nil {
			t.Fatal(err)
		}
	}},
	{"ConditionsRejectUnsupportedValueTypes", func(t *testing.T, s store.Store) {
		wantInvalid(t, s.Put(ctx(t), item(key("a")), store.AttrEquals("s", 3)))
		wantInvalid(t, s.Put(ctx(t), item(key("a")), store.Cond{Kind: store.CondNumBelow, Attr: "n", Value: 3}))
		wantNotFound(t, s, key("a"))
	}},
}

// writers are the ways to write under a condition.
var writers = []struct {
	name  string
	write func(t *testing.T, s store.Store, k store.Key, c store.Cond) error
}{
	{"Put", func(t *testing.T, s store.Store, k store.Key, c store.Cond) error {
		return s.Put(ctx(t), item(k, "w", "put"), c)
	}},
	{"Update", func(t *testing.T, s store.Store, k store.Key, c store.Cond) error {
		_, err := s.Update(ctx(t), k, store.Update{Set: map[string]any{"w": "update"}}, c)
		return err
	}},
	{"Delete", func(t *testing.T, s store.Store, k store.Key, c store.Cond) error {
		return s.Delete(ctx(t), k, c)
	}},
	{"TransactCheck", func(t *testing.T, s store.Store, k store.Key, c store.Cond) error {
		other := store.Key{PK: k.PK, SK: k.SK + "#other"}
		return s.Transact(ctx(t), []store.Op{store.PutOp(item(other)), store.CheckOp(k, c)})
	}},
}
