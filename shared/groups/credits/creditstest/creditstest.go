// Package creditstest drives the ledger's contention paths on a real store
// for the tests of the packages that charge.
package creditstest

import (
	"context"
	"sync/atomic"

	"platformapi/shared/adapters/store"
)

// BalanceLoser is a real store on which the account item's next Lose
// changes of the balance lose their race: the transaction fails that
// member's condition and has no effect, as when another change committed
// first.
type BalanceLoser struct {
	store.Store
	left atomic.Int32
}

// Lose makes the next n changes of an account item's balance lose.
func (s *BalanceLoser) Lose(n int32) { s.left.Store(n) }

func (s *BalanceLoser) Transact(ctx context.Context, ops []store.Op) error {
	for i, op := range ops {
		if op.Kind == store.OpUpdate && op.Key.SK == "account" && op.Update.Set["ledgerSeq"] != nil && s.left.Add(-1) >= 0 {
			return &store.TxError{Index: i}
		}
	}
	return s.Store.Transact(ctx, ops)
}
