package storetest

import (
	"testing"

	"platformapi/shared/adapters/store"
)

// readAfterWriteRules hold an adapter that keeps read items (the embedded
// one caches them) to its reads being strongly consistent: each first
// reads the item twice, by Get and by BatchGet, then writes it, and the
// very next reads see the write.
var readAfterWriteRules = []rule{
	{"APutIsSeenByTheNextRead", func(t *testing.T, s store.Store) {
		readTwice(t, s, key("a"), "n", int64(1))
		mustPut(t, s, item(key("a"), "n", int64(2), "b", []byte("new")))
		wantBothReads(t, s, key("a"), item(key("a"), "n", int64(2), "b", []byte("new")))
	}},
	{"AnUpdateIsSeenByTheNextRead", func(t *testing.T, s store.Store) {
		readTwice(t, s, key("a"), "n", int64(1))
		if _, err := s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"n": 1}, Set: map[string]any{"s": "x"}}); err != nil {
			t.Fatal(err)
		}
		wantBothReads(t, s, key("a"), item(key("a"), "n", int64(2), "s", "x"))
	}},
	{"ADeleteIsSeenByTheNextRead", func(t *testing.T, s store.Store) {
		readTwice(t, s, key("a"), "n", int64(1))
		if err := s.Delete(ctx(t), key("a")); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, s, key("a"))
		got, err := s.BatchGet(ctx(t), []store.Key{key("a")})
		if err != nil || len(got) != 0 {
			t.Fatalf("batch get after delete: %v, %v", got, err)
		}
	}},
	{"ATransactionIsSeenByTheNextRead", func(t *testing.T, s store.Store) {
		readTwice(t, s, key("a"), "n", int64(1))
		readTwice(t, s, key("b"), "n", int64(1))
		readTwice(t, s, key("c"), "n", int64(1))
		err := s.Transact(ctx(t), []store.Op{
			store.PutOp(item(key("a"), "n", int64(5))),
			store.UpdateOp(key("b"), store.Update{Add: map[string]int64{"n": 1}}),
			store.DeleteOp(key("c")),
		})
		if err != nil {
			t.Fatal(err)
		}
		wantBothReads(t, s, key("a"), item(key("a"), "n", int64(5)))
		wantBothReads(t, s, key("b"), item(key("b"), "n", int64(2)))
		wantNotFound(t, s, key("c"))
	}},
	{"AFailedConditionLeavesTheReadItemAsItWas", func(t *testing.T, s store.Store) {
		readTwice(t, s, key("a"), "n", int64(1))
		wantCondFailed(t, s.Put(ctx(t), item(key("a"), "n", int64(9)), store.NotExists()))
		_, err := s.Update(ctx(t), key("a"), store.Update{Add: map[string]int64{"n": 1}}, store.NumAtLeast("n", 5))
		wantCondFailed(t, err)
		wantCondFailed(t, s.Delete(ctx(t), key("a"), store.AttrEquals("n", int64(3))))
		wantCondFailed(t, s.Transact(ctx(t), []store.Op{
			store.PutOp(item(key("a"), "n", int64(9))),
			store.CheckOp(key("zz"), store.Exists()),
		}))
		wantBothReads(t, s, key("a"), item(key("a"), "n", int64(1)))
	}},
	{"ChangingAReadItemChangesNoLaterRead", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "b", []byte("abc"), "s", "x"))
		got := mustGet(t, s, key("a"))
		got.Bytes("b")[0] = 'z'
		got["s"] = "changed"
		batch, err := s.BatchGet(ctx(t), []store.Key{key("a")})
		if err != nil {
			t.Fatal(err)
		}
		batch[key("a").String()].Bytes("b")[1] = 'z'
		wantBothReads(t, s, key("a"), item(key("a"), "b", []byte("abc"), "s", "x"))
	}},
}

// readTwice puts k with one attribute and reads it by Get and by BatchGet,
// twice each, as a caching adapter would fill and then answer.
func readTwice(t *testing.T, s store.Store, k store.Key, attr string, v any) {
	t.Helper()
	mustPut(t, s, item(k, attr, v))
	for range 2 {
		wantBothReads(t, s, k, item(k, attr, v))
	}
}

// wantBothReads checks that Get and BatchGet both answer want for k.
func wantBothReads(t *testing.T, s store.Store, k store.Key, want store.Item) {
	t.Helper()
	wantAttrs(t, mustGet(t, s, k), want)
	got, err := s.BatchGet(ctx(t), []store.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, got[k.String()], want)
}
