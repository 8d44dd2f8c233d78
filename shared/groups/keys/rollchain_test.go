package keys

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/ids"
)

// storeRollChain writes n keys, each rolled into the next, as a roll leaves
// their records (the successor's rolledFrom in its document, the rolled
// key's rolledTo attribute), a transaction at a time, and returns their ids
// oldest first.
func storeRollChain(t *testing.T, st store.Store, now time.Time, n int) []string {
	t.Helper()
	chain := make([]string, n)
	for i := range chain {
		chain[i] = ids.New("key", now)
	}
	var ops []store.Op
	for i, id := range chain {
		k := &Key{ID: id, AccountID: "acct_rollchain", CreatedAt: now, Ancestors: []string{"key_parent"}}
		if i > 0 {
			k.RolledFrom = &chain[i-1]
		}
		it := encode(k)
		if i < n-1 {
			it[attrRolledTo] = chain[i+1]
		}
		ops = append(ops, store.PutOp(it))
		if len(ops) == store.MaxTransactItems || i == n-1 {
			if err := st.Transact(context.Background(), ops); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	return chain
}

func idsOf(chain []*Key) []string {
	out := make([]string, len(chain))
	for i, k := range chain {
		out[i] = k.ID
	}
	return out
}

// A key's roll chain is read from the store whole, from any key of it, in
// both directions, oldest first; past MaxRollChain keys it is refused,
// never answered in part.
func TestARollChainIsReadWholeFromAnyOfItsKeysOrRefusedPastItsBound(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	clock := func() time.Time { return now }
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t, clock)
			for _, n := range []int{1, 4, MaxRollChain} {
				want := storeRollChain(t, st, now, n)
				for _, from := range []string{want[0], want[n/2], want[n-1]} {
					if got, err := RollChain(ctx, st, from); err != nil || !slices.Equal(idsOf(got), want) {
						t.Fatalf("a chain of %d keys read from %s: %d keys %v (%v)", n, from, len(got), idsOf(got), err)
					}
				}
			}
			long := storeRollChain(t, st, now, MaxRollChain+1)
			for _, from := range []string{long[0], long[MaxRollChain/2], long[MaxRollChain]} {
				if got, err := RollChain(ctx, st, from); !errors.Is(err, ErrRollChainTooLong) {
					t.Fatalf("a chain of %d keys read from %s: %d keys, %v", MaxRollChain+1, from, len(got), err)
				}
			}
		})
	}
}
