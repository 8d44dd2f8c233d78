package trading

import (
	"context"
	"errors"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/credits"
)

type fixture struct {
	t     *testing.T
	st    store.Store
	clock *testclock.Clock
	svc   *Service
	tape  *Tape
}

var book = Scope{AccountID: "acct_A", ProjectID: "prj_1"}

// newFixture opens a service with cash dollars per book, the clock at the
// start of a minute (ten seconds in).
func newFixture(t *testing.T, b teststores.Backend, cash string) *fixture {
	t.Helper()
	c := testclock.New(time.Now().UTC().Truncate(time.Minute).Add(10 * time.Second))
	st := b.Open(t, c.Now)
	tape := NewTape([]byte("test-seed"), DefaultSymbols)
	svc, err := New(Config{Store: st, Venue: &Paper{Tape: tape}, PaperCash: cash, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: st, clock: c, svc: svc, tape: tape}
}

func forEachBackend(t *testing.T, cash string, test func(t *testing.T, f *fixture)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) { test(t, newFixture(t, b, cash)) })
	}
}

func (f *fixture) order(sc Scope, req OrderRequest) *Result {
	f.t.Helper()
	res, err := f.svc.CreateOrder(context.Background(), sc, Submission{OrderRequest: req})
	if err != nil {
		f.t.Fatalf("create order %+v: %v", req, err)
	}
	return res
}

func (f *fixture) quote(sc Scope, req QuoteRequest) *Quote {
	f.t.Helper()
	q, err := f.svc.CreateQuote(context.Background(), sc, req)
	if err != nil {
		f.t.Fatalf("quote: %v", err)
	}
	return q
}

func (f *fixture) get(sc Scope, id string) *Order {
	f.t.Helper()
	res, err := f.svc.GetOrder(context.Background(), sc, id)
	if err != nil {
		f.t.Fatalf("get %s: %v", id, err)
	}
	return res.Order
}

// rec is the stored record of an order.
func (f *fixture) rec(sc Scope, id string) *orderRec {
	f.t.Helper()
	o, _, err := f.svc.load(context.Background(), sc, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

func (f *fixture) recheck() []Transition {
	f.t.Helper()
	ts, err := f.svc.Recheck(context.Background(), f.clock.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return ts
}

func (f *fixture) top(symbol string) Top { return f.tape.At(symbol, Minute(f.clock.Now())) }

func (f *fixture) buyingPower(sc Scope) string {
	f.t.Helper()
	bp, err := f.svc.BuyingPower(context.Background(), sc)
	if err != nil {
		f.t.Fatal(err)
	}
	return bp
}

func code(err error) apierr.Code {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func qty(s string) int64 {
	v, err := decimal.Parse(s, QtyPlaces, false)
	if err != nil {
		panic(err)
	}
	return v
}

func price(v int64) string { return decimal.Format(v, PricePlaces) }

func teststoresEmbedded() teststores.Backend { return teststores.Embedded }

// Pinned default-seed tape values (see TestTheDefaultTapeIsReproducible).
var (
	goldenETH = Top{Minute: 28928160, Mid: 284864, Bid: 284778, Ask: 284950, Depth: 3080000000}
	goldenBTC = Top{Minute: 28928160, Mid: 6198300, Bid: 6197060, Ask: 6199540, Depth: 210000000}
)

// openAccount creates an account item funded with micro credits.
func (f *fixture) openAccount(accountID string, micro int64) {
	f.t.Helper()
	if err := f.st.Transact(context.Background(), credits.OpenAccountOps(accountID, micro, "test", f.clock.Now())); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) balance(accountID string) int64 {
	f.t.Helper()
	b, err := credits.NewLedger(f.st, f.clock.Now).Balance(context.Background(), accountID)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}
