package trading

import (
	"context"
	"errors"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits"
)

// settle does the credit action o's last transition recorded (capture or
// release of its hold) and clears it, conditional on the order's revision.
// Ending a hold is idempotent (credits.ErrHoldEnded), so a crash between
// the two steps, or two processes settling at once, charges exactly once.
// A failure is logged and left pending: Recheck and the next read retry it,
// and the request that caused it is not failed for it. It returns o's
// revision as it now is.
func (s *Service) settle(ctx context.Context, o *orderRec, rev int64) int64 {
	ctx = context.WithoutCancel(ctx)
	for attempt := 0; o.CreditPending != "" && attempt < maxAttempts; attempt++ {
		// The order's expiry is its hold's deadline (HoldOps in tryCreate).
		h := s.ledger.HoldOf(o.AccountID, o.HoldID, o.CreditsMicro, o.ExpiresAt)
		var err error
		if o.CreditPending == CreditCapture {
			err = h.Capture(credits.SettledBy(ctx, "trading.orders.fill"), o.CreditsMicro)
		} else {
			err = h.Release(credits.SettledBy(ctx, "trading.orders.release"))
		}
		if err != nil && !errors.Is(err, credits.ErrHoldEnded) {
			s.log.Error("trading: settle credit hold", "order", o.ID, "action", o.CreditPending, "error", err.Error())
			return rev
		}
		next := *o
		next.CreditPending = ""
		ops := []store.Op{store.PutOp(encodeOrder(&next, rev+1), store.AttrEquals("rev", rev))}
		if next.done() {
			ops = append(ops, store.DeleteOp(openKey(o.ID)))
		}
		err = s.st.Transact(ctx, ops)
		var tx *store.TxError
		switch {
		case err == nil:
			*o = next
			return rev + 1
		case !errors.As(err, &tx):
			s.log.Error("trading: clear credit action", "order", o.ID, "error", err.Error())
			return rev
		}
		// The order moved on meanwhile: settle what it says now.
		fresh, freshRev, err := s.load(ctx, o.scope(), o.ID)
		if err != nil {
			s.log.Error("trading: reload order to settle", "order", o.ID, "error", err.Error())
			return rev
		}
		*o, rev = *fresh, freshRev
	}
	return rev
}
