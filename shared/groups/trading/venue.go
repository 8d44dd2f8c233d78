package trading

import (
	"context"
	"errors"
	"time"
)

// Venue is the port to a market. The paper venue prices from the Tape and
// keeps no state of its own: everything it needs travels in the VenueOrder,
// so a retry or a second worker recomputes the same fills. A real venue
// (package alpaca) keeps the order on its side, found again by our order id.
type Venue interface {
	// Name identifies the venue in order records ("paper", "alpaca").
	Name() string
	// Firm reports whether the venue honours quotes: an order carrying a
	// quote's price fills all of its quantity at exactly that price.
	Firm() bool
	// Top is the market for symbol at time at; ErrUnknownSymbol if the
	// venue does not trade it.
	Top(ctx context.Context, symbol string, at time.Time) (Top, error)
	// Submit places o and returns what happened at once.
	Submit(ctx context.Context, o *VenueOrder, now time.Time) (Execution, error)
	// Poll returns what happened to o since o.CheckedThrough (paper) or
	// since o.FilledQty was last reported (a real venue).
	Poll(ctx context.Context, o *VenueOrder, now time.Time) (Execution, error)
}

// ErrUnknownSymbol is a symbol the venue does not trade.
var ErrUnknownSymbol = errors.New("trading: unknown symbol")

// VenueOrder is what a venue needs to know about an order. Amounts are
// fixed-point integers: Qty in QtyPlaces, prices in cents.
type VenueOrder struct {
	ID          string // ours; a real venue's client order id, so a resubmit finds the first
	VenueID     string // the venue's id once known
	Symbol      string
	Side        string
	Type        string
	TimeInForce string
	Qty         int64
	// PriceBound is the worst price the order accepts: the limit price, or
	// for a market order its collar (CollarBps away from the touch at
	// submission). A fill never prints beyond it.
	PriceBound int64
	// FirmPrice, with FirmMinute, is a firm quote's price: the whole
	// quantity fills at exactly this price on submission.
	FirmPrice      int64
	FirmMinute     int64
	FilledQty      int64
	FilledMoney    int64 // Σ qty×price of the fills so far, in MoneyPlaces
	CheckedThrough int64 // the last tape minute already executed against
	CreatedAt      time.Time
	ExpiresAt      time.Time // the order trades only in minutes that begin before this
}

func (o *VenueOrder) remaining() int64 { return o.Qty - o.FilledQty }

// Execution is a venue's answer: new fills, oldest first, and whether the
// venue will fill nothing more.
type Execution struct {
	VenueID        string
	Fills          []VenueFill
	CheckedThrough int64
	Closed         bool
}

// VenueFill is one execution.
type VenueFill struct {
	Qty    int64
	Price  int64 // cents
	At     time.Time
	Minute int64 // the tape minute whose price this is
}

// Paper is the default venue: fills computed from the Tape.
//
// Per minute m an order may take at most depth(m): liquidity is not shared
// between orders, so one account's trading never moves another's fills. A
// buy fills at ask(m) when ask(m) ≤ its price bound, a sell at bid(m) when
// bid(m) ≥ its bound; a fill therefore never prints outside the bid/ask of
// its minute. Time in force: ioc takes what the submission minute offers and
// closes; fok takes the whole quantity in the submission minute or nothing;
// day and gtc rest and are executed minute by minute by Poll until filled or
// expired. A firm quote's order fills entirely at the quote's price.
type Paper struct {
	Tape *Tape
}

// maxPollMinutes bounds the minutes one Poll executes, so a worker that was
// down for weeks catches up in bounded steps.
const maxPollMinutes = 24 * 60

func (p *Paper) Name() string { return "paper" }
func (p *Paper) Firm() bool   { return true }

func (p *Paper) Top(_ context.Context, symbol string, at time.Time) (Top, error) {
	if _, ok := p.Tape.Symbol(symbol); !ok {
		return Top{}, ErrUnknownSymbol
	}
	return p.Tape.At(symbol, Minute(at)), nil
}

func (p *Paper) Submit(_ context.Context, o *VenueOrder, now time.Time) (Execution, error) {
	if _, ok := p.Tape.Symbol(o.Symbol); !ok {
		return Execution{}, ErrUnknownSymbol
	}
	m := Minute(now)
	ex := Execution{VenueID: o.ID, CheckedThrough: m}
	if o.FirmPrice > 0 {
		ex.Fills = []VenueFill{{Qty: o.Qty, Price: o.FirmPrice, At: now, Minute: o.FirmMinute}}
		ex.Closed = true
		return ex, nil
	}
	f, ok := p.fill(o, o.remaining(), m, now)
	switch {
	case o.TimeInForce == TIFFOK && (!ok || f.Qty < o.remaining()):
		ex.Closed = true // all or nothing: nothing
	case ok:
		ex.Fills = []VenueFill{f}
		ex.Closed = o.TimeInForce == TIFIOC || f.Qty == o.remaining()
	default:
		ex.Closed = o.TimeInForce == TIFIOC
	}
	return ex, nil
}

func (p *Paper) Poll(_ context.Context, o *VenueOrder, now time.Time) (Execution, error) {
	if _, ok := p.Tape.Symbol(o.Symbol); !ok {
		return Execution{}, ErrUnknownSymbol
	}
	ex := Execution{VenueID: o.ID, CheckedThrough: o.CheckedThrough}
	last := min(Minute(now), Minute(o.ExpiresAt.Add(-time.Second)), o.CheckedThrough+maxPollMinutes)
	left := o.remaining()
	for m := o.CheckedThrough + 1; m <= last && left > 0; m++ {
		at := time.Unix(m*60, 0).UTC()
		if f, ok := p.fill(o, left, m, at); ok {
			ex.Fills = append(ex.Fills, f)
			left -= f.Qty
		}
		ex.CheckedThrough = m
	}
	ex.Closed = left == 0 || !now.Before(o.ExpiresAt) && ex.CheckedThrough >= Minute(o.ExpiresAt.Add(-time.Second))
	return ex, nil
}

// fill is what minute m gives an order wanting qty: at most the depth, at
// the touch, if the touch is within the order's bound.
func (p *Paper) fill(o *VenueOrder, qty, m int64, at time.Time) (VenueFill, bool) {
	top := p.Tape.At(o.Symbol, m)
	price := top.Ask
	crosses := top.Ask <= o.PriceBound
	if o.Side == SideSell {
		price, crosses = top.Bid, top.Bid >= o.PriceBound
	}
	if !crosses || top.Depth <= 0 {
		return VenueFill{}, false
	}
	return VenueFill{Qty: min(qty, top.Depth), Price: price, At: at, Minute: m}, true
}
