package trading

import (
	"context"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/ids"
)

// change is what one execution did to an order.
type change struct {
	from      string
	fills     []fillRec
	boughtQty int64 // Σ qty of the new fills (buys)
	money     int64 // Σ qty×price of the new fills
	cashBack  int64 // a buy's reservation released because it is done
	freeBack  int64 // a sell's unfilled quantity returned to the position
	firstFill bool
}

// advance applies ex to o: fills, status, reservation, credits.
func (s *Service) advance(o *orderRec, ex Execution, now time.Time) change {
	ch := change{from: o.Status, firstFill: o.FilledQty == 0 && len(ex.Fills) > 0}
	if ex.VenueID != "" {
		o.VenueID = ex.VenueID
	}
	for _, f := range ex.Fills {
		f.Qty = min(f.Qty, o.Qty-o.FilledQty)
		if f.Qty <= 0 {
			continue
		}
		fr := fillRec{ID: ids.New("fil", f.At), Qty: f.Qty, Price: f.Price, At: f.At.UTC(), Minute: f.Minute}
		ch.fills = append(ch.fills, fr)
		o.Fills = append(o.Fills, fr)
		o.FilledQty += f.Qty
		o.FilledMoney += f.Qty * f.Price
		ch.money += f.Qty * f.Price
		if o.Side == SideBuy {
			ch.boughtQty += f.Qty
			o.Reserved -= f.Qty * f.Price
		}
	}
	o.CheckedThrough = max(o.CheckedThrough, ex.CheckedThrough)
	switch {
	case o.FilledQty == o.Qty:
		o.Status = StatusFilled
	case ex.Closed:
		o.Status = StatusExpired
	case o.FilledQty > 0:
		o.Status = StatusPartiallyFilled
	}
	if ch.firstFill {
		o.ChargedMicro = o.CreditsMicro
	}
	if o.HoldID != "" {
		switch {
		case ch.firstFill:
			o.CreditPending = CreditCapture
		case o.done() && o.FilledQty == 0:
			o.CreditPending = CreditRelease
		}
	}
	if o.done() {
		if o.Side == SideBuy {
			ch.cashBack, o.Reserved = o.Reserved, 0
		} else {
			ch.freeBack = o.Qty - o.FilledQty
		}
	}
	if len(ch.fills) > 0 || o.Status != ch.from {
		o.UpdatedAt = now
	}
	return ch
}

func (s *Service) transition(o *orderRec, from string, ch change) Transition {
	t := Transition{Scope: o.scope(), Order: o.view(), From: from, To: o.Status, HoldID: o.HoldID, CreditsMicro: o.CreditsMicro}
	switch {
	case o.HoldID == "":
	case ch.firstFill:
		t.Credit = CreditCapture
	case o.Status == StatusRejected || o.Status == StatusExpired && o.FilledQty == 0:
		t.Credit = CreditRelease
	}
	return t
}

// checkpointMinutes is how far an order may advance without a fill before
// the minutes it has scanned are written down; rescanning fewer is cheaper
// than a write per resting order per minute, and gives the same answer.
const checkpointMinutes = 60

// recheck polls the venue for one order and writes what happened: the
// order (conditional on its revision, so a fill is never applied twice by
// two workers or a retry), the position and the cash, in one transaction.
// It returns the order as it now is and the transition, if any.
func (s *Service) recheck(ctx context.Context, sc Scope, id string, now time.Time) (*orderRec, []Transition, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		o, rev, err := s.load(ctx, sc, id)
		if err != nil {
			return nil, nil, err
		}
		// A credit action a crash left pending is settled before anything
		// else, so it never waits for the order's next transition.
		rev = s.settle(ctx, o, rev)
		if o.done() {
			return o, nil, nil
		}
		ex, err := s.venue.Poll(ctx, o.venueOrder(), now)
		if err != nil {
			return nil, nil, fmt.Errorf("trading: poll %s: %w", s.venue.Name(), err)
		}
		before, venueID := o.CheckedThrough, o.VenueID
		ch := s.advance(o, ex, now)
		if len(ch.fills) == 0 && o.Status == ch.from && o.CheckedThrough-before < checkpointMinutes && o.VenueID == venueID {
			return o, nil, nil
		}
		ops := []store.Op{store.PutOp(encodeOrder(o, rev+1), store.AttrEquals("rev", rev))}
		iPos := -1
		if o.Side == SideBuy {
			if ch.boughtQty > 0 {
				ops = append(ops, store.UpdateOp(sc.key("pos#"+o.Symbol), store.Update{Add: map[string]int64{
					"qty": ch.boughtQty, "free": ch.boughtQty, "cost": ch.money}}))
			}
			if ch.cashBack != 0 {
				ops = append(ops, store.UpdateOp(sc.key("cash"), store.Update{Add: map[string]int64{"debit": -ch.cashBack}}))
			}
		} else if len(ch.fills) > 0 || ch.freeBack > 0 {
			it, err := s.st.Get(ctx, sc.key("pos#"+o.Symbol))
			if err != nil {
				return nil, nil, fmt.Errorf("trading: read position: %w", err)
			}
			pos := decodePosition(it)
			after := pos
			for _, f := range ch.fills {
				after = after.sell(f.Qty, f.Qty*f.Price)
			}
			after.Free += ch.freeBack
			iPos = len(ops)
			ops = append(ops, store.UpdateOp(sc.key("pos#"+o.Symbol), store.Update{Add: map[string]int64{
				"free": after.Free - pos.Free, "qty": after.Qty - pos.Qty, "cost": after.Cost - pos.Cost, "realized": after.Realized - pos.Realized}},
				store.AttrEquals("qty", pos.Qty), store.AttrEquals("cost", pos.Cost)))
			if ch.money > 0 {
				ops = append(ops, store.UpdateOp(sc.key("cash"), store.Update{Add: map[string]int64{"debit": -ch.money}}))
			}
		}
		if o.done() && o.CreditPending == "" {
			ops = append(ops, store.DeleteOp(openKey(o.ID)))
		}
		var ts []Transition
		if o.Status != ch.from || ch.firstFill {
			ts = append(ts, s.transition(o, ch.from, ch))
		}
		ops, dispatch, err := s.withEvents(ops, ts...)
		if err != nil {
			return nil, nil, err
		}
		err = s.st.Transact(ctx, ops)
		var tx *store.TxError
		switch {
		case err == nil:
			dispatch(ctx)
			s.settle(ctx, o, rev+1)
			return o, ts, nil
		case errors.As(err, &tx) && (tx.Index == 0 || tx.Index == iPos):
			continue // another worker advanced the order, or the position moved: start again from the store
		default:
			return nil, nil, fmt.Errorf("trading: apply fills: %w", err)
		}
	}
	return nil, nil, errBusy
}

// GetOrder returns one of the book's orders, re-checked against the venue
// first so a resting order reads as of now. Another book's order is
// not_found.
func (s *Service) GetOrder(ctx context.Context, sc Scope, id string) (*Result, error) {
	o, ts, err := s.recheck(ctx, sc, id, s.now())
	if err != nil {
		return nil, err
	}
	return &Result{Order: o.view(), Transitions: ts}, nil
}

// Recheck advances every open order of every book to now, and settles the
// credit holds a crash left pending; the scheduled worker calls it (every
// minute). It is idempotent and safe to run concurrently with itself and
// with reads: each order's write is conditional on its revision. It returns
// the transitions it caused; an order it could not advance is reported in
// the error and the others are still visited.
func (s *Service) Recheck(ctx context.Context, now time.Time) ([]Transition, error) {
	var out []Transition
	var errs []error
	after := ""
	for {
		page, err := s.st.Query(ctx, store.Query{PK: openKey("").PK, After: after, Limit: 100})
		if err != nil {
			return out, errors.Join(append(errs, fmt.Errorf("trading: list open orders: %w", err))...)
		}
		for _, it := range page.Items {
			after = it.Key().SK
			sc := Scope{AccountID: it.String("acct"), ProjectID: it.String("project")}
			o, ts, err := s.recheck(ctx, sc, after, now)
			out = append(out, ts...)
			switch {
			case errors.Is(err, errOrderNotFound), err == nil && o.done() && o.CreditPending == "":
				// The order is gone (a deleted account) or done and settled:
				// stop visiting it. Usually its last transaction already did.
				if err := s.st.Delete(ctx, openKey(after)); err != nil {
					errs = append(errs, fmt.Errorf("trading: clear open order: %w", err))
				}
			case err != nil:
				errs = append(errs, fmt.Errorf("trading: recheck %s: %w", after, err))
			}
		}
		if !page.More {
			return out, errors.Join(errs...)
		}
	}
}

// EventName is the webhook event of a transition: trading.order.<status>.
func EventName(t Transition) string { return "trading.order." + t.To }

// withEvents appends the events of ts to ops; dispatch, once the
// transaction committed, fans them out (the outbox sweep does it for a
// process that died first).
func (s *Service) withEvents(ops []store.Op, ts ...Transition) ([]store.Op, func(context.Context), error) {
	if s.outbox == nil || len(ts) == 0 {
		return ops, func(context.Context) {}, nil
	}
	var dispatches []func(context.Context)
	for _, t := range ts {
		evOps, dispatch, err := s.outbox.Outboxed(t.Scope.AccountID, t.Scope.ProjectID, EventName(t), t.Order)
		if err != nil {
			return nil, nil, err
		}
		ops, dispatches = append(ops, evOps...), append(dispatches, dispatch)
	}
	return ops, func(ctx context.Context) {
		for _, d := range dispatches {
			d(ctx)
		}
	}, nil
}
