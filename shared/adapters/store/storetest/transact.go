package storetest

import (
	"errors"
	"testing"

	"platformapi/shared/adapters/store"
)

var transactRules = []rule{
	{"TransactAppliesEveryKindOfMember", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("upd"), "n", int64(1)))
		mustPut(t, s, item(key("del")))
		mustPut(t, s, item(key("chk"), "v", "ok"))
		err := s.Transact(ctx(t), []store.Op{
			store.PutOp(item(key("put"), "s", "v"), store.NotExists()),
			store.UpdateOp(key("upd"), store.Update{Add: map[string]int64{"n": 2}}, store.Exists()),
			store.DeleteOp(key("del"), store.Exists()),
			store.CheckOp(key("chk"), store.AttrEquals("v", "ok")),
		})
		if err != nil {
			t.Fatal(err)
		}
		wantAttrs(t, mustGet(t, s, key("put")), item(key("put"), "s", "v"))
		wantAttrs(t, mustGet(t, s, key("upd")), item(key("upd"), "n", int64(3)))
		wantNotFound(t, s, key("del"))
		wantAttrs(t, mustGet(t, s, key("chk")), item(key("chk"), "v", "ok"))
	}},
	{"TransactIsAllOrNothing", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("upd"), "n", int64(1)))
		mustPut(t, s, item(key("del")))
		err := s.Transact(ctx(t), []store.Op{
			store.PutOp(item(key("put"))),
			store.UpdateOp(key("upd"), store.Update{Add: map[string]int64{"n": 2}}),
			store.DeleteOp(key("del")),
			store.CheckOp(key("missing"), store.Exists()),
		})
		wantTxIndex(t, err, 3)
		wantNotFound(t, s, key("put"))
		wantAttrs(t, mustGet(t, s, key("upd")), item(key("upd"), "n", int64(1)))
		mustGet(t, s, key("del"))
	}},
	{"TransactErrorNamesTheFirstFailedMember", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("b")))
		mustPut(t, s, item(key("d")))
		for _, c := range []struct {
			name string
			ops  []store.Op
			want int
		}{
			{"OnlyFailure", []store.Op{store.PutOp(item(key("a"))), store.PutOp(item(key("b")), store.NotExists())}, 1},
			{"LowestOfSeveral", []store.Op{
				store.PutOp(item(key("a"))),
				store.UpdateOp(key("b"), store.Update{Add: map[string]int64{"n": 1}}, store.NumAtLeast("n", 1)),
				store.PutOp(item(key("c"))),
				store.DeleteOp(key("d"), store.NotExists()),
			}, 1},
			{"FirstMember", []store.Op{store.CheckOp(key("c"), store.Exists()), store.PutOp(item(key("d")), store.NotExists())}, 0},
		} {
			t.Run(c.name, func(t *testing.T) { wantTxIndex(t, s.Transact(ctx(t), c.ops), c.want) })
		}
	}},
	{"TransactRefusesACheckWithoutCondition", func(t *testing.T, s store.Store) {
		wantInvalid(t, s.Transact(ctx(t), []store.Op{store.PutOp(item(key("a"))), store.CheckOp(key("b"))}))
		wantNotFound(t, s, key("a"))
	}},
	{"TransactRefusesTheSameKeyTwice", func(t *testing.T, s store.Store) {
		wantInvalid(t, s.Transact(ctx(t), []store.Op{store.PutOp(item(key("a"))), store.DeleteOp(key("a"))}))
		wantNotFound(t, s, key("a"))
	}},
	{"TransactRefusesMoreThanMaxTransactItems", func(t *testing.T, s store.Store) {
		ops := make([]store.Op, store.MaxTransactItems+1)
		for i := range ops {
			ops[i] = store.PutOp(item(store.Key{PK: "big", SK: string(rune('a'+i%26)) + string(rune('a'+i/26))}))
		}
		wantInvalid(t, s.Transact(ctx(t), ops))
	}},
	{"TransactHoldsMaxTransactItems", func(t *testing.T, s store.Store) {
		ops := make([]store.Op, store.MaxTransactItems)
		for i := range ops {
			ops[i] = store.PutOp(item(store.Key{PK: "big", SK: string(rune('a'+i%26)) + string(rune('a'+i/26))}))
		}
		if err := s.Transact(ctx(t), ops); err != nil {
			t.Fatal(err)
		}
		page, err := s.Query(ctx(t), store.Query{PK: "big"})
		if err != nil || len(page.Items) != store.MaxTransactItems {
			t.Fatalf("query after transaction: %d items, %v", len(page.Items), err)
		}
	}},
}

func wantTxIndex(t *testing.T, err error, index int) {
	t.Helper()
	var tx *store.TxError
	if !errors.As(err, &tx) || tx.Index != index || !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("err = %v; want *store.TxError{Index: %d} matching ErrConditionFailed", err, index)
	}
}
