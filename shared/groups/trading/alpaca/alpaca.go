// Package alpaca is the trading.Venue port over Alpaca's Trading API (and
// any REST service compatible with it): orders through POST /v2/orders and
// GET /v2/orders/{id}, positions through GET /v2/positions, prices through
// the market-data latest-quote endpoint. It authenticates with the
// APCA-API-KEY-ID and APCA-API-SECRET-KEY headers, taken from the caller
// (a protected connection), and never logs or returns them.
//
// Amounts cross the wire as decimal strings and are read with package
// decimal; a JSON number in a quote is read from its text, never through a
// float. Our order id is Alpaca's client_order_id, so a submission retried
// after a crash finds the first one instead of trading twice. Market orders
// are sent as limit orders at their collar (trading.CollarBps), so the
// cash reserved for them stays exact.
package alpaca

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/trading"
)

// Config is where the venue is and who we are there.
type Config struct {
	BaseURL string // trading API, e.g. https://paper-api.alpaca.markets
	DataURL string // market data, e.g. https://data.alpaca.markets
	KeyID   string
	Secret  string
	Client  *http.Client
}

// Venue is an Alpaca-compatible venue.
type Venue struct{ cfg Config }

var _ trading.Venue = (*Venue)(nil)

// New builds the venue.
func New(cfg Config) *Venue {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	return &Venue{cfg: cfg}
}

func (v *Venue) Name() string { return "alpaca" }

// Firm is false: Alpaca's prices move between a quote and an order.
func (v *Venue) Firm() bool { return false }

// ErrVenue is a response the venue should not have sent, or a refusal.
var ErrVenue = errors.New("alpaca: venue error")

// pair maps our symbol (ETH-USD) to Alpaca's (ETH/USD).
func pair(symbol string) string { return strings.Replace(symbol, "-", "/", 1) }

type quoteBody struct {
	Quotes map[string]struct {
		Ask json.Number `json:"ap"`
		Bid json.Number `json:"bp"`
		Sz  json.Number `json:"as"`
	} `json:"quotes"`
}

func (v *Venue) Top(ctx context.Context, symbol string, at time.Time) (trading.Top, error) {
	var body quoteBody
	q := url.Values{"symbols": {pair(symbol)}}
	if err := v.do(ctx, v.cfg.DataURL, http.MethodGet, "/v1beta3/crypto/us/latest/quotes?"+q.Encode(), nil, &body); err != nil {
		return trading.Top{}, err
	}
	quote, ok := body.Quotes[pair(symbol)]
	if !ok {
		return trading.Top{}, trading.ErrUnknownSymbol
	}
	bid, err1 := cents(quote.Bid.String(), decimal.Down)
	ask, err2 := cents(quote.Ask.String(), decimal.Up)
	size, err3 := decimal.Parse(quote.Sz.String(), trading.QtyPlaces, false)
	if err := errors.Join(err1, err2, err3); err != nil || bid <= 0 || ask < bid {
		return trading.Top{}, fmt.Errorf("%w: latest quote of %s: %v", ErrVenue, symbol, err)
	}
	return trading.Top{Minute: trading.Minute(at), Mid: (bid + ask) / 2, Bid: bid, Ask: ask, Depth: size}, nil
}

// cents reads a price with any number of places into whole cents.
func cents(s string, r decimal.Rounding) (int64, error) {
	v, err := decimal.Parse(s, 10, false)
	if err != nil {
		return 0, err
	}
	c, _ := decimal.MulDiv(v, 1, 100_000_000, r)
	return c, nil
}

// order is Alpaca's order object, the fields we use.
type order struct {
	ID             string `json:"id"`
	ClientOrderID  string `json:"client_order_id"`
	Status         string `json:"status"`
	FilledQty      string `json:"filled_qty"`
	FilledAvgPrice string `json:"filled_avg_price"`
	FilledAt       string `json:"filled_at"`
	UpdatedAt      string `json:"updated_at"`
}

type orderRequest struct {
	Symbol        string `json:"symbol"`
	Qty           string `json:"qty"`
	Side          string `json:"side"`
	Type          string `json:"type"`
	TimeInForce   string `json:"time_in_force"`
	LimitPrice    string `json:"limit_price"`
	ClientOrderID string `json:"client_order_id"`
}

func (v *Venue) Submit(ctx context.Context, o *trading.VenueOrder, now time.Time) (trading.Execution, error) {
	req := orderRequest{Symbol: pair(o.Symbol), Qty: decimal.Format(o.Qty, trading.QtyPlaces), Side: o.Side, Type: "limit",
		TimeInForce: o.TimeInForce, LimitPrice: decimal.Format(o.PriceBound, trading.PricePlaces), ClientOrderID: o.ID}
	var got order
	err := v.do(ctx, v.cfg.BaseURL, http.MethodPost, "/v2/orders", req, &got)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusUnprocessableEntity && strings.Contains(se.body, "client_order_id") {
		// A retry of a submission that reached the venue: find the first.
		err = v.do(ctx, v.cfg.BaseURL, http.MethodGet, "/v2/orders:by_client_order_id?"+url.Values{"client_order_id": {o.ID}}.Encode(), nil, &got)
	}
	if err != nil {
		return trading.Execution{}, err
	}
	return execution(o, got, now)
}

func (v *Venue) Poll(ctx context.Context, o *trading.VenueOrder, now time.Time) (trading.Execution, error) {
	if o.VenueID == "" {
		return v.Submit(ctx, o, now)
	}
	var got order
	if err := v.do(ctx, v.cfg.BaseURL, http.MethodGet, "/v2/orders/"+url.PathEscape(o.VenueID), nil, &got); err != nil {
		return trading.Execution{}, err
	}
	return execution(o, got, now)
}

// execution turns Alpaca's cumulative fill (filled_qty at
// filled_avg_price) into the fill since what o already holds: its price is
// the one that makes our total equal Alpaca's, rounded to the cent and
// never beyond the order's price bound.
func execution(o *trading.VenueOrder, got order, now time.Time) (trading.Execution, error) {
	ex := trading.Execution{VenueID: got.ID, CheckedThrough: trading.Minute(now)}
	switch got.Status {
	case "filled", "canceled", "expired", "rejected", "done_for_day":
		ex.Closed = true
	}
	if got.FilledQty == "" {
		return ex, nil
	}
	filled, err := decimal.Parse(got.FilledQty, trading.QtyPlaces, false)
	if err != nil {
		return ex, fmt.Errorf("%w: filled_qty %q: %v", ErrVenue, got.FilledQty, err)
	}
	delta := filled - o.FilledQty
	if delta <= 0 {
		return ex, nil
	}
	avg, err := decimal.Parse(got.FilledAvgPrice, trading.AvgPlaces, false)
	if err != nil {
		return ex, fmt.Errorf("%w: filled_avg_price %q: %v", ErrVenue, got.FilledAvgPrice, err)
	}
	// filled×avg is in 10^-16 dollars; our money in 10^-10.
	total := new(big.Int).Mul(big.NewInt(filled), big.NewInt(avg))
	total.Sub(total, new(big.Int).Mul(big.NewInt(o.FilledMoney), big.NewInt(1_000_000)))
	p := decimal.Div(total, new(big.Int).Mul(big.NewInt(delta), big.NewInt(1_000_000)), decimal.HalfUp).Int64()
	if o.Side == trading.SideBuy {
		p = min(p, o.PriceBound)
	} else {
		p = max(p, o.PriceBound)
	}
	at := now
	if t, err := time.Parse(time.RFC3339Nano, got.UpdatedAt); err == nil {
		at = t
	}
	ex.Fills = []trading.VenueFill{{Qty: delta, Price: p, At: at, Minute: trading.Minute(at)}}
	return ex, nil
}

// Position is Alpaca's position, amounts as the decimal strings it sends.
type Position struct {
	Symbol        string `json:"symbol"`
	Qty           string `json:"qty"`
	AvgEntryPrice string `json:"avg_entry_price"`
	CostBasis     string `json:"cost_basis"`
	MarketValue   string `json:"market_value"`
	CurrentPrice  string `json:"current_price"`
	UnrealizedPl  string `json:"unrealized_pl"`
}

// Positions reads the venue's positions, to reconcile with our books.
func (v *Venue) Positions(ctx context.Context) ([]Position, error) {
	var out []Position
	if err := v.do(ctx, v.cfg.BaseURL, http.MethodGet, "/v2/positions", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("alpaca: status %d: %s", e.status, e.body)
}
func (e *statusError) Unwrap() error { return ErrVenue }

func (v *Venue) do(ctx context.Context, base, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("APCA-API-KEY-ID", v.cfg.KeyID)
	req.Header.Set("APCA-API-SECRET-KEY", v.cfg.Secret)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := v.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("alpaca: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("alpaca: %s %s: %w", method, req.URL.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &statusError{status: resp.StatusCode, body: string(raw)}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrVenue, method, req.URL.Path, err)
	}
	return nil
}
