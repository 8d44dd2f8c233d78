package trading

import (
	"context"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/base/ids"
)

// QuoteRequest is the body of POST /trading/quotes: exactly one of Qty and
// Notional, decimal strings.
type QuoteRequest struct {
	Symbol   string `json:"symbol" doc:"Instrument, e.g. ETH-USD, BTC-USD" example:"ETH-USD"`
	Side     string `json:"side" enum:"buy,sell" example:"buy"`
	Qty      string `json:"qty,omitempty" doc:"Quantity, a decimal string with up to 8 decimals" example:"0.5"`
	Notional string `json:"notional,omitempty" doc:"Or dollars to spend or raise, a decimal string with up to 2 decimals"`
}

// quoteRec is a quote as stored.
type quoteRec struct {
	ID        string    `json:"id"`
	Symbol    string    `json:"symbol"`
	Side      string    `json:"side"`
	Qty       int64     `json:"qty"`
	Price     int64     `json:"price"`
	Bid       int64     `json:"bid"`
	Ask       int64     `json:"ask"`
	Minute    int64     `json:"minute"`
	Firm      bool      `json:"firm"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func (q *quoteRec) view() *Quote {
	return &Quote{ID: q.ID, Symbol: q.Symbol, Side: q.Side, Qty: decimal.Format(q.Qty, QtyPlaces),
		Price: decimal.Format(q.Price, PricePlaces), Bid: decimal.Format(q.Bid, PricePlaces), Ask: decimal.Format(q.Ask, PricePlaces),
		EstimatedTotal: decimal.Format(q.Qty*q.Price, MoneyPlaces), Firm: q.Firm, ExpiresAt: q.ExpiresAt}
}

// CreateQuote prices a trade at the touch of the current minute. Its one
// write is a single Put, so it is safe under idempotency.Deferring.
func (s *Service) CreateQuote(ctx context.Context, sc Scope, req QuoteRequest) (*Quote, error) {
	now := s.now()
	top, err := s.top(ctx, req.Symbol, now, "body.symbol")
	if err != nil {
		return nil, err
	}
	if err := checkSide(req.Side); err != nil {
		return nil, err
	}
	price := top.Ask
	if req.Side == SideSell {
		price = top.Bid
	}
	qty, notional, err := parseSize(req.Qty, req.Notional)
	if err != nil {
		return nil, err
	}
	if notional != 0 {
		qty = notional / price
	}
	if err := checkOrderSize(qty, price, s.depthCap(top, req.Symbol)); err != nil {
		return nil, err
	}
	firm := s.venue.Firm()
	if firm && qty > top.Depth {
		return nil, apierr.Invalid("The quantity exceeds what the venue can fill at once.",
			apierr.Field("body.qty", "at most %s %s can be quoted in this minute; split the trade or send a market order", decimal.Format(top.Depth, QtyPlaces), req.Symbol))
	}
	q := &quoteRec{ID: ids.New("trq", now), Symbol: req.Symbol, Side: req.Side, Qty: qty, Price: price, Bid: top.Bid, Ask: top.Ask,
		Minute: top.Minute, Firm: firm, ExpiresAt: now.Add(QuoteTTL).Truncate(time.Millisecond)}
	it := store.NewItem(sc.key("trq#" + q.ID))
	it.SetDoc(q)
	it["validUntil"] = q.ExpiresAt.UnixMilli()
	// Kept a day past its expiry so a late order hears quote_expired, not not_found.
	it[store.AttrExpiresAt] = q.ExpiresAt.Add(24 * time.Hour).Unix()
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		return nil, fmt.Errorf("trading: store quote: %w", err)
	}
	return q.view(), nil
}

func (s *Service) getQuote(ctx context.Context, sc Scope, id string) (*quoteRec, bool, error) {
	notFound := apierr.Invalid("No such quote.", apierr.Field("body.quoteId", "no quote %q in this project", id))
	if !ids.Valid("trq", id) {
		return nil, false, notFound
	}
	it, err := s.st.Get(ctx, sc.key("trq#"+id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, notFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("trading: read quote: %w", err)
	}
	var q quoteRec
	if err := it.Doc(&q); err != nil {
		return nil, false, fmt.Errorf("trading: decode quote: %w", err)
	}
	return &q, it.Has("used"), nil
}

// top is the venue's market, with an unknown symbol as a field error.
func (s *Service) top(ctx context.Context, symbol string, now time.Time, location string) (Top, error) {
	top, err := s.venue.Top(ctx, symbol, now)
	if errors.Is(err, ErrUnknownSymbol) {
		return Top{}, apierr.Invalid("Unknown symbol.", apierr.Field(location, "the %s venue does not trade %q", s.venue.Name(), symbol))
	}
	if err != nil {
		return Top{}, fmt.Errorf("trading: market of %s: %w", symbol, err)
	}
	return top, nil
}

// depthCap is the largest quantity one order may have.
func (s *Service) depthCap(top Top, symbol string) int64 {
	if p, ok := s.venue.(*Paper); ok {
		if sym, ok := p.Tape.Symbol(symbol); ok {
			return sym.DepthQty * MaxOrderDepthMinutes
		}
	}
	return 0
}

func checkSide(side string) error {
	if side != SideBuy && side != SideSell {
		return apierr.Invalid("Unknown side.", apierr.Field("body.side", "buy or sell"))
	}
	return nil
}

// parseSize reads exactly one of qty and notional.
func parseSize(qty, notional string) (int64, int64, error) {
	switch {
	case qty != "" && notional != "":
		return 0, 0, apierr.Invalid("Send qty or notional, not both.", apierr.Field("body.notional", "omit when qty is sent"))
	case qty != "":
		q, err := decimal.Parse(qty, QtyPlaces, false)
		if err != nil || q == 0 {
			return 0, 0, apierr.Invalid("Invalid quantity.", apierr.Field("body.qty", "a positive decimal with at most %d fractional digits", QtyPlaces))
		}
		return q, 0, nil
	case notional != "":
		n, err := decimal.Parse(notional, PricePlaces, false)
		if err != nil || n == 0 {
			return 0, 0, apierr.Invalid("Invalid notional.", apierr.Field("body.notional", "a positive dollar amount with at most %d fractional digits", PricePlaces))
		}
		return 0, n * (moneyUnit / 100), nil
	default:
		return 0, 0, apierr.Invalid("Send qty or notional.", apierr.Field("body.qty", "required unless notional is sent"))
	}
}

// checkOrderSize bounds one order: a positive quantity, at most maxQty
// (0: no bound) and at most MaxOrderMoney at price.
func checkOrderSize(qty, price, maxQty int64) error {
	if qty <= 0 {
		return apierr.Invalid("The notional buys nothing at the current price.", apierr.Field("body.notional", "too small for one unit of %s", decimal.Format(1, QtyPlaces)))
	}
	if maxQty > 0 && qty > maxQty {
		return apierr.Invalid("Order too large.", apierr.Field("body.qty", "at most %s", decimal.Format(maxQty, QtyPlaces)))
	}
	if v, ok := decimal.Mul(qty, price); !ok || v > MaxOrderMoney {
		return apierr.Invalid("Order too large.", apierr.Field("body.qty", "at most %s dollars per order", decimal.Format(MaxOrderMoney, MoneyPlaces)))
	}
	return nil
}
