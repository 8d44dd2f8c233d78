package trading

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/creditstest"
)

// holdless fails every transaction that ends a credit hold while it is on:
// the process "dies" between an order's transition and its settlement.
type holdless struct {
	store.Store
	on atomic.Bool
}

var errDown = errors.New("test: the ledger is down")

func (h *holdless) Transact(ctx context.Context, ops []store.Op) error {
	if h.on.Load() && strings.HasPrefix(ops[0].Key.SK, "hold#") {
		return errDown
	}
	return h.Store.Transact(ctx, ops)
}

// charged sums what the ledger captured and returned for the account.
func charged(t *testing.T, st store.Store, accountID string) (captures, releases int) {
	t.Helper()
	es, err := credits.NewLedger(st, time.Now).Entries(context.Background(), accountID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		switch e.Type {
		case credits.TypeCapture:
			captures++
		case credits.TypeRelease:
			releases++
		}
	}
	return captures, releases
}

func TestACreditActionLeftPendingByACrashIsSettledOnceByRecheck(t *testing.T) {
	forEachBackend(t, "10000000", func(t *testing.T, f *fixture) {
		f.openAccount(book.AccountID, 1_000_000)
		h := &holdless{Store: f.st}
		svc, err := New(Config{Store: h, Venue: &Paper{Tape: f.tape}, PaperCash: "10000000", Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		top := f.top("ETH-USD")
		h.on.Store(true)
		filled, err := svc.CreateOrder(ctx, book, Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC}, CreditsMicro: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		unfilled, err := svc.CreateOrder(ctx, book, Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeLimit, Qty: "1",
			LimitPrice: decimal.Format(top.Bid/2, PricePlaces), TimeInForce: TIFIOC}, CreditsMicro: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		if filled.Order.Status != StatusFilled || unfilled.Order.Status != StatusExpired {
			t.Fatalf("statuses %s, %s", filled.Order.Status, unfilled.Order.Status)
		}
		if f.rec(book, filled.Order.ID).CreditPending != CreditCapture || f.rec(book, unfilled.Order.ID).CreditPending != CreditRelease {
			t.Fatal("the pending credit actions were not recorded with the transitions")
		}
		if got := f.balance(book.AccountID); got != 800_000 {
			t.Fatalf("balance with two holds %d, want 800000", got)
		}
		h.on.Store(false)
		for range 2 {
			if _, err := svc.Recheck(ctx, f.clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if got := f.balance(book.AccountID); got != 900_000 {
			t.Fatalf("balance after settlement %d, want 900000 (one captured, one released)", got)
		}
		if c, r := charged(t, f.st, book.AccountID); c != 1 || r != 1 {
			t.Fatalf("ledger has %d captures and %d releases, want 1 and 1", c, r)
		}
		for _, id := range []string{filled.Order.ID, unfilled.Order.ID} {
			if f.rec(book, id).CreditPending != "" {
				t.Fatalf("order %s still has a pending credit action", id)
			}
			if _, err := f.st.Get(ctx, openKey(id)); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("settled order %s is still visited by Recheck: %v", id, err)
			}
		}
	})
}

func TestAnOrderTheBalanceCannotCoverIsRefusedWithNothingWritten(t *testing.T) {
	forEachBackend(t, "10000000", func(t *testing.T, f *fixture) {
		f.openAccount(book.AccountID, 50_000)
		_, err := f.svc.CreateOrder(context.Background(), book, Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC}, CreditsMicro: 100_000})
		if code(err) != "insufficient_credits" {
			t.Fatalf("err %v, want insufficient_credits", err)
		}
		list, _, err := f.svc.ListOrders(context.Background(), book, 10, "")
		if err != nil || len(list) != 0 {
			t.Fatalf("orders after a refused create: %v %v", list, err)
		}
		if bp := f.buyingPower(book); bp != "10000000" {
			t.Fatalf("buying power %s after a refused create", bp)
		}
	})
}

func TestARejectedOrderTakesNoCredits(t *testing.T) {
	forEachBackend(t, "1", func(t *testing.T, f *fixture) {
		f.openAccount(book.AccountID, 1_000_000)
		res, err := f.svc.CreateOrder(context.Background(), book, Submission{OrderRequest: OrderRequest{Symbol: "BTC-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFDay}, CreditsMicro: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Order.Status != StatusRejected || *res.Order.RejectReason != RejectBuyingPower || res.Order.ChargedCredits != "0" {
			t.Fatalf("order %+v", res.Order)
		}
		if got := f.balance(book.AccountID); got != 1_000_000 {
			t.Fatalf("balance %d after a rejected order", got)
		}
	})
}

// The load rule holds for an order's hold as for the ledger's own changes:
// an order whose hold loses every race it may answers 503 and slices the
// account, on which the same order then commits.
func TestAnOrderWhoseHoldKeepsLosingTheBalanceRaceSlicesTheAccount(t *testing.T) {
	forEachBackend(t, "10000000", func(t *testing.T, f *fixture) {
		f.openAccount(book.AccountID, 1_000_000)
		st := &creditstest.BalanceLoser{Store: f.st}
		svc, err := New(Config{Store: st, Venue: &Paper{Tape: f.tape}, PaperCash: "10000000", Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		sub := Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC}, CreditsMicro: 100_000}
		st.Lose(65)
		if _, err := svc.CreateOrder(ctx, book, sub); code(err) != "service_unavailable" {
			t.Fatalf("order after 65 lost balance races: %v; want service_unavailable", err)
		}
		it, err := f.st.Get(ctx, store.Key{PK: "acct#" + book.AccountID, SK: "account"})
		if err != nil {
			t.Fatal(err)
		}
		if n := credits.SlicesOf(it); n != 8 {
			t.Fatalf("the account has %d slices after the order kept losing; want 8", n)
		}
		res, err := svc.CreateOrder(ctx, book, sub)
		if err != nil || res.Order.Status != StatusFilled {
			t.Fatalf("order on the sliced account: %v %+v", err, res)
		}
		if got := f.balance(book.AccountID); got != 900_000 {
			t.Fatalf("balance %d after one held order; want 900000", got)
		}
	})
}
