package trading

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/credits"
)

// OrderRequest is the body of POST /trading/orders: a quoteId, or a symbol,
// side, type, size and time in force.
type OrderRequest struct {
	QuoteID       string `json:"quoteId,omitempty" doc:"A firm quote: the order takes its symbol, side, qty and price and fills whole at once (fok)" example:"trq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	Symbol        string `json:"symbol,omitempty" doc:"Instrument, e.g. ETH-USD, BTC-USD" example:"ETH-USD"`
	Side          string `json:"side,omitempty" enum:"buy,sell" example:"buy"`
	Type          string `json:"type,omitempty" enum:"market,limit" example:"limit"`
	Qty           string `json:"qty,omitempty" doc:"Quantity, a decimal string with up to 8 decimals" example:"0.5"`
	Notional      string `json:"notional,omitempty" doc:"Market orders only: dollars to spend (buy) or raise (sell); converted to qty at the submission price"`
	LimitPrice    string `json:"limitPrice,omitempty" doc:"Limit orders: a decimal string with up to 2 decimals" example:"2500.00"`
	TimeInForce   string `json:"timeInForce,omitempty" enum:"day,gtc,ioc,fok" doc:"day: until 00:00 UTC; gtc: 90 days; ioc: what the submission minute offers; fok: all at once or nothing" example:"gtc"`
	ClientOrderID string `json:"clientOrderId,omitempty" maxLength:"128" doc:"Your id, unique in the book" example:"rebalance-2026-01-05"`
}

// Submission is an order request with what the caller settled around it.
type Submission struct {
	OrderRequest
	// DedupeKey, when set, makes the create exactly-once: a second create
	// with the same key in the same book returns the first order (Replayed)
	// instead of trading again, even if the first call's response was lost.
	// The HTTP layer passes the key id and Idempotency-Key.
	DedupeKey string
	// CreditsMicro is the order's price in micro-credits. When positive, a
	// credit hold of it is taken in the same transaction that writes the
	// order (an order never exists without its hold, nor a hold without its
	// order), captured at the first fill and released when the order ends
	// unfilled. An order rejected at submission takes no hold.
	CreditsMicro int64
}

// Result is what a call did: the order and its status transitions (the
// creation counts as one, From "").
type Result struct {
	Order       *Order
	Transitions []Transition
	Replayed    bool
}

var (
	errOrderNotFound = apierr.New(apierr.NotFound, "No such order.")
	errQuoteUsed     = apierr.New(apierr.QuoteAlreadyUsed, "The quote has already been used by an order.")
	errQuoteExpired  = apierr.New(apierr.QuoteExpired, "The quote has expired; request a new one.")
	errBusy          = apierr.New(apierr.ServiceUnavailable, "The book is changing under heavy concurrency; retry.").WithHeader("Retry-After", "1")
	errNoCredits     = apierr.New(apierr.InsufficientCredits, "The balance cannot cover the order's credit charge. Top up with POST /v1/credits/x402/top-up.")
)

// maxAttempts bounds the retries of a write that lost a race.
const maxAttempts = 12

// CreateOrder submits an order to the venue and writes it, its immediate
// fills, the cash reservation and the position in one transaction. A buy
// reserves qty × its price bound of the book's cash and a sell reserves the
// quantity of its position, each with a conditional write, so concurrent
// orders never promise more than the book has; an order that does not fit
// is written as rejected. The credit hold (sub.CreditsMicro) is part of the
// same transaction. It interprets failed conditions, so it is NOT safe
// under idempotency.Deferring: use DedupeKey instead.
func (s *Service) CreateOrder(ctx context.Context, sc Scope, sub Submission) (*Result, error) {
	now := s.now()
	o, err := s.prepare(ctx, sc, sub, now)
	if err != nil {
		return nil, err
	}
	// The balance's races go through the ledger's rule, which slices an
	// account whose changes keep losing (docs/credits.md); the position's
	// are the book's own.
	races := 0
	for attempt := 0; ; attempt++ {
		res, retry, err := s.tryCreate(ctx, sc, o, sub, now)
		if err != nil || retry == retryNone {
			return res, err
		}
		if retry == retryBalance {
			err = s.ledger.Raced(ctx, sc.AccountID, races)
			races++
		} else {
			err = credits.Raced(ctx, attempt)
		}
		if err != nil {
			return nil, errBusy
		}
	}
}

// retryReason is why an attempt of CreateOrder is to be made again.
type retryReason int

const (
	retryNone     retryReason = iota
	retryPosition             // the position changed since it was read
	retryBalance              // another change of the balance came first
)

// prepare validates the request and builds the order before any execution.
func (s *Service) prepare(ctx context.Context, sc Scope, sub Submission, now time.Time) (*orderRec, error) {
	req := sub.OrderRequest
	if len(req.ClientOrderID) > 128 {
		return nil, apierr.Invalid("clientOrderId too long.", apierr.Field("body.clientOrderId", "at most 128 bytes"))
	}
	o := &orderRec{ID: ids.New("ord", now), AccountID: sc.AccountID, ProjectID: sc.ProjectID, Venue: s.venue.Name(),
		ClientOrderID: req.ClientOrderID, Status: StatusNew, Fills: []fillRec{}, CreditsMicro: max(sub.CreditsMicro, 0),
		CreatedAt: now, UpdatedAt: now}
	if o.CreditsMicro > 0 {
		o.HoldID = ids.New("hld", now)
	}
	if req.QuoteID != "" {
		if req.Symbol != "" || req.Side != "" || req.Type != "" || req.Qty != "" || req.Notional != "" || req.LimitPrice != "" {
			return nil, apierr.Invalid("An order with a quoteId takes everything else from the quote.", apierr.Field("body.quoteId", "send only quoteId, timeInForce and clientOrderId"))
		}
		if req.TimeInForce != "" && req.TimeInForce != TIFFOK {
			return nil, apierr.Invalid("A quote is filled whole or not at all.", apierr.Field("body.timeInForce", "omit, or fok"))
		}
		q, used, err := s.getQuote(ctx, sc, req.QuoteID)
		if err != nil {
			return nil, err
		}
		if used {
			return nil, errQuoteUsed
		}
		if !now.Before(q.ExpiresAt) {
			return nil, errQuoteExpired
		}
		o.Symbol, o.Side, o.Type, o.TIF, o.Qty, o.QuoteID = q.Symbol, q.Side, TypeMarket, TIFFOK, q.Qty, q.ID
		o.PriceBound = q.Price
		if q.Firm {
			o.FirmPrice, o.FirmMinute = q.Price, q.Minute
		}
		o.ExpiresAt = now
		return o, nil
	}
	top, err := s.top(ctx, req.Symbol, now, "body.symbol")
	if err != nil {
		return nil, err
	}
	if err := checkSide(req.Side); err != nil {
		return nil, err
	}
	o.Symbol, o.Side, o.Type, o.TIF = req.Symbol, req.Side, req.Type, req.TimeInForce
	switch req.TimeInForce {
	case TIFDay:
		y, m, d := now.Date()
		o.ExpiresAt = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	case TIFGTC:
		o.ExpiresAt = now.Add(GTCLifetime).Truncate(time.Minute)
	case TIFIOC, TIFFOK:
		o.ExpiresAt = now
	default:
		return nil, apierr.Invalid("Unknown time in force.", apierr.Field("body.timeInForce", "day, gtc, ioc or fok"))
	}
	touch := top.Ask
	if o.Side == SideSell {
		touch = top.Bid
	}
	switch req.Type {
	case TypeMarket:
		if req.LimitPrice != "" {
			return nil, apierr.Invalid("A market order has no limit price.", apierr.Field("body.limitPrice", "omit for a market order"))
		}
		o.PriceBound = collar(touch, o.Side)
	case TypeLimit:
		if req.Notional != "" {
			return nil, apierr.Invalid("A limit order is sized by qty.", apierr.Field("body.notional", "market orders only"))
		}
		lp, err := decimal.Parse(req.LimitPrice, PricePlaces, false)
		if err != nil || lp == 0 {
			return nil, apierr.Invalid("Invalid limit price.", apierr.Field("body.limitPrice", "a positive price with at most %d fractional digits", PricePlaces))
		}
		o.LimitPrice, o.PriceBound = lp, lp
	default:
		return nil, apierr.Invalid("Unknown order type.", apierr.Field("body.type", "market or limit"))
	}
	qty, notional, err := parseSize(req.Qty, req.Notional)
	if err != nil {
		return nil, err
	}
	if notional != 0 {
		qty, o.Notional = notional/touch, notional
	}
	if err := checkOrderSize(qty, o.PriceBound, s.depthCap(top, o.Symbol)); err != nil {
		return nil, err
	}
	o.Qty = qty
	return o, nil
}

// collar is a market order's price bound: CollarBps beyond the touch,
// rounded away from the market to whole cents.
func collar(touch int64, side string) int64 {
	if side == SideBuy {
		v, _ := decimal.MulDiv(touch, 10_000+CollarBps, 10_000, decimal.Up)
		return v
	}
	v, _ := decimal.MulDiv(touch, 10_000-CollarBps, 10_000, decimal.Down)
	return max(v, 1)
}

// tryCreate runs one attempt; retry says which concurrent change, if any,
// invalidated what the attempt computed.
func (s *Service) tryCreate(ctx context.Context, sc Scope, base *orderRec, sub Submission, now time.Time) (*Result, retryReason, error) {
	o := *base
	o.Fills = []fillRec{}
	var pos position
	if o.Side == SideSell {
		it, err := s.st.Get(ctx, sc.key("pos#"+o.Symbol))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, retryNone, fmt.Errorf("trading: read position: %w", err)
		}
		if err == nil {
			pos = decodePosition(it)
		}
		if pos.Free < o.Qty {
			res, err := s.reject(ctx, sc, &o, sub, RejectPosition)
			return res, retryNone, err
		}
	}
	if o.Side == SideBuy {
		o.Reserved = o.Qty * o.PriceBound
	}
	ex, err := s.venue.Submit(ctx, o.venueOrder(), now)
	if err != nil {
		return nil, retryNone, fmt.Errorf("trading: submit to %s: %w", s.venue.Name(), err)
	}
	ch := s.advance(&o, ex, now)
	ops := []store.Op{store.PutOp(encodeOrder(&o, 1), store.NotExists())}
	iCash, iPos, iQuote, iCoid, iDedupe := -1, -1, -1, -1, -1
	if o.Side == SideBuy {
		iCash = len(ops)
		reserve := o.Qty * o.PriceBound
		ops = append(ops, store.UpdateOp(sc.key("cash"), store.Update{Add: map[string]int64{"debit": reserve - ch.cashBack}},
			store.NumBelow("debit", s.cash-reserve+1)))
		if ch.boughtQty > 0 {
			ops = append(ops, store.UpdateOp(sc.key("pos#"+o.Symbol), store.Update{Add: map[string]int64{
				"qty": ch.boughtQty, "free": ch.boughtQty, "cost": ch.money}}))
		}
	} else {
		iPos = len(ops)
		after := pos
		after.Free -= o.Qty - ch.freeBack
		for _, f := range ch.fills {
			after = after.sell(f.Qty, f.Qty*f.Price)
		}
		conds := []store.Cond{store.NumAtLeast("free", o.Qty)}
		if len(ch.fills) > 0 {
			conds = append(conds, store.AttrEquals("qty", pos.Qty), store.AttrEquals("cost", pos.Cost))
		}
		ops = append(ops, store.UpdateOp(sc.key("pos#"+o.Symbol), store.Update{Add: map[string]int64{
			"free": after.Free - pos.Free, "qty": after.Qty - pos.Qty, "cost": after.Cost - pos.Cost, "realized": after.Realized - pos.Realized}}, conds...))
		if ch.money > 0 {
			ops = append(ops, store.UpdateOp(sc.key("cash"), store.Update{Add: map[string]int64{"debit": -ch.money}}))
		}
	}
	if o.QuoteID != "" {
		iQuote = len(ops)
		ops = append(ops, store.UpdateOp(sc.key("trq#"+o.QuoteID), store.Update{Set: map[string]any{"used": o.ID}},
			store.Exists(), store.AttrNotExists("used"), store.NumAtLeast("validUntil", now.UnixMilli()+1)))
	}
	ops, iCoid, iDedupe = s.uniqueness(ops, sc, &o, sub, now)
	var hold *credits.Change
	if o.HoldID != "" {
		a, err := s.ledger.AccountFor(ctx, sc.AccountID, o.CreditsMicro)
		var holdOps []store.Op
		if err == nil {
			holdOps, hold, err = credits.HoldOps(ctx, a, o.HoldID, o.CreditsMicro, "trading.orders.create "+o.ID, now, o.ExpiresAt)
		}
		if errors.Is(err, credits.ErrInsufficient) {
			return nil, retryNone, errNoCredits
		}
		if err != nil {
			return nil, retryNone, err
		}
		ops = append(ops, holdOps...)
	}
	if !o.done() || o.CreditPending != "" {
		ops = append(ops, openOp(&o))
	}
	t := s.transition(&o, "", ch)
	ops, dispatch, err := s.withEvents(ops, t)
	if err != nil {
		return nil, retryNone, err
	}
	err = s.st.Transact(ctx, ops)
	var tx *store.TxError
	switch {
	case err == nil:
		if hold != nil {
			hold.Committed()
		}
		dispatch(ctx)
		s.settle(ctx, &o, 1)
		return &Result{Order: o.view(), Transitions: []Transition{t}}, retryNone, nil
	case !errors.As(err, &tx):
		return nil, retryNone, fmt.Errorf("trading: create order: %w", err)
	case tx.Index == iCash:
		res, err := s.reject(ctx, sc, &o, sub, RejectBuyingPower)
		return res, retryNone, err
	case tx.Index == iPos:
		return nil, retryPosition, nil // re-read the position and decide again
	case tx.Index == iQuote:
		_, used, err := s.getQuote(ctx, sc, o.QuoteID)
		if err != nil {
			return nil, retryNone, err
		}
		if used {
			return nil, retryNone, errQuoteUsed
		}
		return nil, retryNone, errQuoteExpired
	case tx.Index == iCoid:
		return nil, retryNone, apierr.New(apierr.Conflict, "clientOrderId %q is already used by another order in this book.", o.ClientOrderID)
	case tx.Index == iDedupe:
		res, err := s.replay(ctx, sc, sub.DedupeKey)
		return res, retryNone, err
	case credits.IsRace(err, ops, hold):
		return nil, retryBalance, nil // another change of the balance came first
	default:
		return nil, retryNone, fmt.Errorf("trading: create order: %w", err)
	}
}

// uniqueness adds the dedupe and clientOrderId claims of a new order; the
// dedupe claim comes first, so a retry finds its order rather than a
// clientOrderId conflict with itself.
func (s *Service) uniqueness(ops []store.Op, sc Scope, o *orderRec, sub Submission, now time.Time) ([]store.Op, int, int) {
	iCoid, iDedupe := -1, -1
	if sub.DedupeKey != "" {
		iDedupe = len(ops)
		it := store.NewItem(sc.key("ddp#" + dedupeHash(sub.DedupeKey)))
		it["orderId"] = o.ID
		it[store.AttrExpiresAt] = now.Add(DedupeRetention).Unix()
		ops = append(ops, store.PutOp(it, store.NotExists()))
	}
	if o.ClientOrderID != "" {
		iCoid = len(ops)
		it := store.NewItem(sc.key("coid#" + o.ClientOrderID))
		it["orderId"] = o.ID
		ops = append(ops, store.PutOp(it, store.NotExists()))
	}
	return ops, iCoid, iDedupe
}

func dedupeHash(k string) string { h := sha256.Sum256([]byte(k)); return hex.EncodeToString(h[:]) }

func openOp(o *orderRec) store.Op {
	it := store.NewItem(openKey(o.ID))
	it["acct"], it["project"] = o.AccountID, o.ProjectID
	return store.PutOp(it)
}

// reject writes o as rejected for reason: nothing reserved, nothing filled,
// no credit held (a hold and its release in one transaction cancel out).
func (s *Service) reject(ctx context.Context, sc Scope, o *orderRec, sub Submission, reason string) (*Result, error) {
	r := *o
	r.Fills, r.FilledQty, r.FilledMoney, r.Reserved, r.ChargedMicro = []fillRec{}, 0, 0, 0, 0
	r.HoldID, r.CreditPending = "", "" // nothing to hold: the order never reaches the venue
	r.Status, r.RejectReason = StatusRejected, reason
	ops, iCoid, iDedupe := s.uniqueness([]store.Op{store.PutOp(encodeOrder(&r, 1), store.NotExists())}, sc, &r, sub, r.CreatedAt)
	t := s.transition(&r, "", change{})
	ops, dispatch, err := s.withEvents(ops, t)
	if err != nil {
		return nil, err
	}
	err = s.st.Transact(ctx, ops)
	var tx *store.TxError
	switch {
	case err == nil:
		dispatch(ctx)
		return &Result{Order: r.view(), Transitions: []Transition{t}}, nil
	case errors.As(err, &tx) && tx.Index == iCoid:
		return nil, apierr.New(apierr.Conflict, "clientOrderId %q is already used by another order in this book.", r.ClientOrderID)
	case errors.As(err, &tx) && tx.Index == iDedupe:
		return s.replay(ctx, sc, sub.DedupeKey)
	default:
		return nil, fmt.Errorf("trading: reject order: %w", err)
	}
}

// replay returns the order a dedupe key created, for a retry of the call
// whose earlier attempt created it and whose answer was never stored (or
// expired): the retry answers for the call and owes the order's credit
// hold to that attempt's audit event (Ledger.Inherit).
func (s *Service) replay(ctx context.Context, sc Scope, key string) (*Result, error) {
	it, err := s.st.Get(ctx, sc.key("ddp#"+dedupeHash(key)))
	if err != nil {
		return nil, fmt.Errorf("trading: read dedupe: %w", err)
	}
	o, _, err := s.load(ctx, sc, it.String("orderId"))
	if err != nil {
		return nil, err
	}
	if o.HoldID != "" {
		if err := s.ledger.Inherit(ctx, o.AccountID, o.HoldID, o.CreditsMicro); err != nil {
			return nil, err
		}
	}
	return &Result{Order: o.view(), Replayed: true}, nil
}

func (s *Service) load(ctx context.Context, sc Scope, id string) (*orderRec, int64, error) {
	if !ids.Valid("ord", id) {
		return nil, 0, errOrderNotFound
	}
	it, err := s.st.Get(ctx, sc.key("ord#"+id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, errOrderNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("trading: read order: %w", err)
	}
	return decodeOrder(it)
}
