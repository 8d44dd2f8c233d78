package storetest

import (
	"testing"

	"platformapi/shared/adapters/store"
)

// expiryRules hold whether or not the adapter has deleted the item yet: a
// backend that never expires anything (moto) must still pass them.
var expiryRules = []rule{
	{"ExpiredItemIsInvisibleToGet", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "expiresAt", past()))
		wantNotFound(t, s, key("a"))
	}},
	{"ItemExpiringLaterIsVisible", func(t *testing.T, s store.Store) {
		it := item(key("a"), "expiresAt", future())
		mustPut(t, s, it)
		wantAttrs(t, mustGet(t, s, key("a")), it)
	}},
	{"ExpiredItemIsInvisibleToBatchGetAndQuery", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "expiresAt", past()))
		mustPut(t, s, item(key("b")))
		got, err := s.BatchGet(ctx(t), []store.Key{key("a"), key("b")})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got[key("a").String()]; ok || len(got) != 1 {
			t.Fatalf("BatchGet = %v; want only b", got)
		}
		page, err := s.Query(ctx(t), store.Query{PK: key("a").PK})
		if err != nil {
			t.Fatal(err)
		}
		wantSKs(t, page, false, "b")
	}},
	{"UpdateOfExpiredItemStartsFresh", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "stale", "secret", "n", int64(100), "expiresAt", past()))
		got, err := s.Update(ctx(t), key("a"), store.Update{
			Add: map[string]int64{"n": 1}, Set: map[string]any{"s": "v"},
		}, store.AttrNotExists("stale"))
		if err != nil {
			t.Fatal(err)
		}
		want := item(key("a"), "n", int64(1), "s", "v")
		wantAttrs(t, got, want)
		wantAttrs(t, mustGet(t, s, key("a")), want)
	}},
	{"UpdateOfExpiredItemWithNewExpiryStartsFresh", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "stale", "x", "n", int64(7), "expiresAt", past()))
		exp := future()
		got, err := s.Update(ctx(t), key("a"), store.Update{
			Add: map[string]int64{"n": 1}, Set: map[string]any{store.AttrExpiresAt: exp},
		}, store.NotExists())
		if err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, got, item(key("a"), "n", int64(1), "expiresAt", exp))
	}},
	{"ConditionalPutSucceedsOverExpiredItem", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "stale", "x", "expiresAt", past()))
		if err := s.Put(ctx(t), item(key("a"), "v", "new"), store.NotExists()); err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "v", "new"))
	}},
	{"TransactUpdateOfExpiredItemStartsFresh", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "stale", "x", "n", int64(9), "expiresAt", past()))
		err := s.Transact(ctx(t), []store.Op{
			store.UpdateOp(key("a"), store.Update{Add: map[string]int64{"n": 2}}, store.NotExists()),
			store.PutOp(item(key("b"))),
		})
		if err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "n", int64(2)))
	}},
	{"DeleteOfExpiredItemWithExistsFails", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "expiresAt", past()))
		wantCondFailed(t, s.Delete(ctx(t), key("a"), store.Exists()))
	}},
}
