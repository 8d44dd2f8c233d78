package trading

import (
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/decimal"
)

// orderRec is an order as stored: every amount a fixed-point integer.
type orderRec struct {
	ID            string    `json:"id"`
	AccountID     string    `json:"accountId"`
	ProjectID     string    `json:"projectId"`
	Venue         string    `json:"venue"`
	VenueID       string    `json:"venueId,omitempty"`
	Symbol        string    `json:"symbol"`
	Side          string    `json:"side"`
	Type          string    `json:"type"`
	TIF           string    `json:"timeInForce"`
	Qty           int64     `json:"qty"`
	Notional      int64     `json:"notional,omitempty"`
	LimitPrice    int64     `json:"limitPrice,omitempty"`
	PriceBound    int64     `json:"priceBound"`
	QuoteID       string    `json:"quoteId,omitempty"`
	FirmPrice     int64     `json:"firmPrice,omitempty"`
	FirmMinute    int64     `json:"firmMinute,omitempty"`
	ClientOrderID string    `json:"clientOrderId,omitempty"`
	Status        string    `json:"status"`
	RejectReason  string    `json:"rejectReason,omitempty"`
	Fills         []fillRec `json:"fills"`
	FilledQty     int64     `json:"filledQty"`
	FilledMoney   int64     `json:"filledMoney"`
	// Reserved is the cash a buy still holds (MoneyPlaces); 0 once done.
	Reserved       int64     `json:"reserved"`
	CheckedThrough int64     `json:"checkedThrough"`
	ExpiresAt      time.Time `json:"expiresAt"`
	HoldID         string    `json:"holdId,omitempty"`
	CreditsMicro   int64     `json:"creditsMicro"`
	ChargedMicro   int64     `json:"chargedMicro"`
	// CreditPending is what is still to be done with the hold
	// (CreditCapture, CreditRelease), written in the transaction of the
	// transition that asks for it and cleared once done, so a crash in
	// between leaves a debt Recheck and the next read settle.
	CreditPending string    `json:"creditPending,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

type fillRec struct {
	ID     string    `json:"id"`
	Qty    int64     `json:"qty"`
	Price  int64     `json:"price"`
	At     time.Time `json:"at"`
	Minute int64     `json:"minute"`
}

func (o *orderRec) scope() Scope { return Scope{AccountID: o.AccountID, ProjectID: o.ProjectID} }

func (o *orderRec) done() bool {
	return o.Status == StatusFilled || o.Status == StatusExpired || o.Status == StatusRejected
}

func (o *orderRec) venueOrder() *VenueOrder {
	return &VenueOrder{ID: o.ID, VenueID: o.VenueID, Symbol: o.Symbol, Side: o.Side, Type: o.Type, TimeInForce: o.TIF,
		Qty: o.Qty, PriceBound: o.PriceBound, FirmPrice: o.FirmPrice, FirmMinute: o.FirmMinute,
		FilledQty: o.FilledQty, FilledMoney: o.FilledMoney, CheckedThrough: o.CheckedThrough,
		CreatedAt: o.CreatedAt, ExpiresAt: o.ExpiresAt}
}

func encodeOrder(o *orderRec, rev int64) store.Item {
	it := store.NewItem(o.scope().key("ord#" + o.ID))
	it.SetDoc(o)
	it["rev"] = rev
	it["status"] = o.Status
	return it
}

func decodeOrder(it store.Item) (*orderRec, int64, error) {
	var o orderRec
	if err := it.Doc(&o); err != nil {
		return nil, 0, fmt.Errorf("trading: decode order: %w", err)
	}
	return &o, it.Int("rev"), nil
}

// view is the client's record of o.
func (o *orderRec) view() *Order {
	out := &Order{ID: o.ID, Symbol: o.Symbol, Side: o.Side, Type: o.Type, Qty: decimal.Format(o.Qty, QtyPlaces),
		TimeInForce: o.TIF, Status: o.Status, FilledQty: decimal.Format(o.FilledQty, QtyPlaces), Fills: []Fill{},
		ChargedCredits: json.Number(decimal.Format(o.ChargedMicro, 6)), CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	if o.Notional != 0 {
		out.Notional = ptr(decimal.Format(o.Notional, MoneyPlaces))
	}
	if o.Type == TypeLimit {
		out.LimitPrice = ptr(decimal.Format(o.LimitPrice, PricePlaces))
	}
	if o.ClientOrderID != "" {
		out.ClientOrderID = ptr(o.ClientOrderID)
	}
	if o.QuoteID != "" {
		out.QuoteID = ptr(o.QuoteID)
	}
	if o.RejectReason != "" {
		out.RejectReason = ptr(o.RejectReason)
	}
	if !o.done() {
		out.ExpiresAt = ptr(o.ExpiresAt)
	}
	if o.FilledQty > 0 {
		out.FilledAvgPrice = ptr(avgPrice(o.FilledMoney, o.FilledQty))
	}
	for _, f := range o.Fills {
		out.Fills = append(out.Fills, Fill{ID: f.ID, Qty: decimal.Format(f.Qty, QtyPlaces), Price: decimal.Format(f.Price, PricePlaces),
			Notional: decimal.Format(f.Qty*f.Price, MoneyPlaces), At: f.At})
	}
	return out
}

// avgPrice is money / qty as a price with AvgPlaces, half up.
func avgPrice(money, qty int64) string {
	n := new(big.Int).Mul(big.NewInt(money), big.NewInt(decimal.Pow10(AvgPlaces+QtyPlaces-MoneyPlaces)))
	return decimal.FormatBig(decimal.Div(n, big.NewInt(qty), decimal.HalfUp), AvgPlaces)
}

func ptr[T any](v T) *T { return &v }

// position is a position item's numbers.
type position struct {
	Qty, Free, Cost, Realized int64
}

func decodePosition(it store.Item) position {
	return position{Qty: it.Int("qty"), Free: it.Int("free"), Cost: it.Int("cost"), Realized: it.Int("realized")}
}

// sell applies a sale of qty for money at average cost: the cost basis
// leaves in proportion to the quantity (rounded down; all of it when the
// position closes) and the difference to the proceeds is realized.
func (p position) sell(qty, money int64) position {
	removed := p.Cost
	if qty < p.Qty {
		removed, _ = decimal.MulDiv(p.Cost, qty, p.Qty, decimal.Down)
	}
	return position{Qty: p.Qty - qty, Free: p.Free, Cost: p.Cost - removed, Realized: p.Realized + money - removed}
}
