// Package trading is managed trading: firm quotes, orders and positions on
// a venue behind the Venue port, the paper venue (a deterministic price
// tape, see Tape) by default. It holds no HTTP and no AWS types; it must
// never hold an amount in a float, never let a position differ from the sum
// of its fills, and never show one account's or project's orders or
// positions to another.
//
// A book is one account and one project ("" is the account level): it has
// its own paper cash (Config.PaperCash at the start), positions and orders.
//
// Storage (single table, in the account's partition; <p> is the project id
// or "-"):
//
//	acct#<acct> | trd#<p>#cash             debit: cash spent or reserved, net (MoneyPlaces)
//	acct#<acct> | trd#<p>#pos#<symbol>     qty, free (qty not promised to open sells),
//	                                       cost (cost basis), realized (realized P&L)
//	acct#<acct> | trd#<p>#ord#<id>         the order; doc, rev, status
//	acct#<acct> | trd#<p>#trq#<id>         a quote; doc, validUntil (ms), used (order id)
//	acct#<acct> | trd#<p>#coid#<clientId>  orderId: a clientOrderId is used once per book
//	acct#<acct> | trd#<p>#ddp#<sha256>     orderId: the order a dedupe key created (24 h)
//	trading#open | <orderId>               acct, project: the orders Recheck visits
//	                                       (open, or done with a credit action pending)
//	acct#<acct> | hold#<id>                the order's credit hold (package credits)
//
// Every fill is written in one transaction with its order (conditional on
// the order's revision, so no fill is ever applied twice), the position
// and the cash.
package trading

import (
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"platformapi/shared/adapters/outbox"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/credits"
)

// Fixed-point scales. A quantity is a count of 10^-8 units, a price a count
// of cents, and money (cash, notional, cost, P&L) a count of 10^-10 dollars:
// exactly a quantity times a price, so a fill's value is never rounded.
// Average prices are shown with AvgPlaces, rounded half up.
const (
	QtyPlaces   = 8
	PricePlaces = 2
	MoneyPlaces = QtyPlaces + PricePlaces
	AvgPlaces   = 8

	qtyUnit   = 100_000_000
	moneyUnit = 10_000_000_000
)

// Order fields.
const (
	SideBuy  = "buy"
	SideSell = "sell"

	TypeMarket = "market"
	TypeLimit  = "limit"

	TIFDay = "day"
	TIFGTC = "gtc"
	TIFIOC = "ioc"
	TIFFOK = "fok"

	StatusNew             = "new"
	StatusPartiallyFilled = "partially_filled"
	StatusFilled          = "filled"
	StatusExpired         = "expired"
	StatusRejected        = "rejected"

	RejectBuyingPower = "insufficient_buying_power"
	RejectPosition    = "insufficient_position"
)

// Limits of the paper venue.
const (
	// QuoteTTL is how long a quote is firm.
	QuoteTTL = 15 * time.Second
	// CollarBps bounds a market order's price: a buy never pays more than
	// the ask at submission plus 5%, a sell never takes less than the bid
	// minus 5%. It makes the cash a market buy reserves exact.
	CollarBps = 500
	// GTCLifetime is when a gtc order expires (Alpaca's crypto rule).
	GTCLifetime = 90 * 24 * time.Hour
	// MaxOrderMoney caps one order's value (qty × price bound): $100M.
	MaxOrderMoney = 100_000_000 * moneyUnit
	// MaxOrderDepthMinutes caps one order's quantity at this many minutes of
	// the symbol's nominal depth, which bounds its number of fills.
	MaxOrderDepthMinutes = 30
	// DedupeRetention is how long a dedupe key finds its order again.
	DedupeRetention = 24 * time.Hour
	// DefaultPaperCash is each book's starting cash without configuration.
	DefaultPaperCash = "100000"
)

// Scope is the book a caller trades in.
type Scope struct {
	AccountID string
	ProjectID string // "" at account level
}

func (s Scope) prefix() string {
	p := s.ProjectID
	if p == "" {
		p = "-"
	}
	return "trd#" + p + "#"
}

func (s Scope) key(rest string) store.Key {
	return store.Key{PK: "acct#" + s.AccountID, SK: s.prefix() + rest}
}

func openKey(orderID string) store.Key { return store.Key{PK: "trading#open", SK: orderID} }

// Config are a Service's dependencies.
type Config struct {
	Store store.Store
	// Venue executes orders; nil means the paper venue on the default
	// symbols seeded with DefaultSeed.
	Venue Venue
	// PaperCash is every book's starting cash, a decimal string of dollars;
	// "" means DefaultPaperCash.
	PaperCash string
	Now       func() time.Time
	// Logger receives what a request cannot report: a credit settlement
	// that failed and waits for the next read or Recheck.
	Logger *slog.Logger
	// Outbox records each order change's trading.order.<status> event in
	// the change's transaction; nil records none.
	Outbox outbox.Recorder
}

// Service is managed trading on one venue.
type Service struct {
	st     store.Store
	ledger *credits.Ledger
	venue  Venue
	cash   int64
	now    func() time.Time
	log    *slog.Logger
	outbox outbox.Recorder
}

// New builds a Service; an unreadable PaperCash is a configuration error.
func New(cfg Config) (*Service, error) {
	if cfg.PaperCash == "" {
		cfg.PaperCash = DefaultPaperCash
	}
	cash, err := decimal.Parse(cfg.PaperCash, MoneyPlaces, false)
	if err != nil {
		return nil, errors.New("trading: paper cash " + cfg.PaperCash + ": " + err.Error())
	}
	if cfg.Venue == nil {
		cfg.Venue = &Paper{Tape: NewTape([]byte(DefaultSeed), DefaultSymbols)}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	now := func() time.Time { return cfg.Now().UTC() }
	return &Service{st: cfg.Store, ledger: credits.NewLedger(cfg.Store, now), venue: cfg.Venue, cash: cash, now: now, log: cfg.Logger, outbox: cfg.Outbox}, nil
}

// Quote is a price for a trade, firm on the paper venue until ExpiresAt.
type Quote struct {
	ID             string    `json:"id" example:"trq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	Symbol         string    `json:"symbol" example:"ETH-USD"`
	Side           string    `json:"side" enum:"buy,sell" example:"buy"`
	Qty            string    `json:"qty" example:"0.5"`
	Price          string    `json:"price" doc:"The price an order with this quote fills at (the ask for a buy, the bid for a sell)" example:"2849.50"`
	Bid            string    `json:"bid" example:"2847.78"`
	Ask            string    `json:"ask" example:"2849.50"`
	EstimatedTotal string    `json:"estimatedTotal" doc:"qty × price, exactly" example:"1424.75"`
	Firm           bool      `json:"firm" doc:"An order with this quote's id before expiresAt fills at exactly price" example:"true"`
	ExpiresAt      time.Time `json:"expiresAt" example:"2026-01-05T14:03:25Z"`
}

// Fill is one execution of an order.
type Fill struct {
	ID       string    `json:"id" example:"fil_01J9Z3K4M5N6P7Q8R9S0T1V2W4"`
	Qty      string    `json:"qty" example:"0.5"`
	Price    string    `json:"price" example:"2849.50"`
	Notional string    `json:"notional" doc:"qty × price, exactly" example:"1424.75"`
	At       time.Time `json:"at" example:"2026-01-05T14:03:12Z"`
}

// Order is the order record clients see.
type Order struct {
	ID             string      `json:"id" example:"ord_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	Symbol         string      `json:"symbol" example:"ETH-USD"`
	Side           string      `json:"side" enum:"buy,sell" example:"buy"`
	Type           string      `json:"type" enum:"market,limit" example:"market"`
	Qty            string      `json:"qty" doc:"Quantity in units of the base asset, up to 8 decimals" example:"0.5"`
	Notional       *string     `json:"notional" doc:"The notional asked for; qty is what it bought at the submission price"`
	LimitPrice     *string     `json:"limitPrice" doc:"Limit orders: the worst price accepted, in cents precision"`
	TimeInForce    string      `json:"timeInForce" enum:"day,gtc,ioc,fok" example:"fok"`
	ClientOrderID  *string     `json:"clientOrderId"`
	QuoteID        *string     `json:"quoteId"`
	Status         string      `json:"status" enum:"new,partially_filled,filled,expired,rejected" doc:"new → partially_filled → filled; or expired (time in force ran out), or rejected (see rejectReason)" example:"filled"`
	FilledQty      string      `json:"filledQty" doc:"Σ qty of fills" example:"0.5"`
	FilledAvgPrice *string     `json:"filledAvgPrice" doc:"Σ notional / Σ qty of the fills, 8 decimals half up; null before the first fill" example:"2849.5"`
	Fills          []Fill      `json:"fills" doc:"Every execution, oldest first; their sum is filledQty"`
	RejectReason   *string     `json:"rejectReason" enum:"insufficient_buying_power,insufficient_position" doc:"Why a rejected order was refused"`
	ChargedCredits json.Number `json:"chargedCredits" doc:"Credits charged: the order's price from its first fill, 0 for an order that never filled" example:"0.1"`
	ExpiresAt      *time.Time  `json:"expiresAt" doc:"When a resting order expires; null once it is done"`
	CreatedAt      time.Time   `json:"createdAt" example:"2026-01-05T14:03:12Z"`
	UpdatedAt      time.Time   `json:"updatedAt" example:"2026-01-05T14:03:12Z"`
}

// Position is a book's holding in one symbol, at average cost.
type Position struct {
	Symbol        string `json:"symbol" example:"ETH-USD"`
	Qty           string `json:"qty" example:"0.5"`
	AvgEntryPrice string `json:"avgEntryPrice" example:"2849.5"`
	CostBasis     string `json:"costBasis" example:"1424.75"`
	MarketValue   string `json:"marketValue" doc:"qty × currentPrice" example:"1430.1"`
	CurrentPrice  string `json:"currentPrice" doc:"The tape's mid at the time of the request" example:"2860.20"`
	UnrealizedPl  string `json:"unrealizedPl" example:"5.35"`
	RealizedPl    string `json:"realizedPl" example:"0"`
}

// Credit actions on an order's hold.
const (
	CreditCapture = "capture" // the order's first fill: capture its hold
	CreditRelease = "release" // expired without a fill: release its hold
)

// Transition is one change of an order's status, for events
// (trading.order.<To>). Credit names what the transition did to the
// order's credit hold (HoldID, CreditsMicro), "" for nothing; the Service
// settles it itself.
type Transition struct {
	Scope        Scope
	Order        *Order
	From, To     string // From is "" for a new order
	Credit       string
	HoldID       string
	CreditsMicro int64
}
