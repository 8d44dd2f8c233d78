package trading

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/credits"
)

func TestTheTapeIsAPureFunctionOfSeedSymbolAndMinute(t *testing.T) {
	a := NewTape([]byte("seed-1"), DefaultSymbols)
	b := NewTape([]byte("seed-1"), DefaultSymbols)
	c := NewTape([]byte("seed-2"), DefaultSymbols)
	differs := 0
	for m := int64(29_000_000); m < 29_000_500; m++ {
		for _, s := range DefaultSymbols {
			x, y := a.At(s.Name, m), b.At(s.Name, m)
			if x != y {
				t.Fatalf("%s at %d: %+v then %+v", s.Name, m, x, y)
			}
			if !(x.Bid < x.Mid && x.Mid < x.Ask) || x.Depth < s.DepthQty/2 || x.Depth > s.DepthQty*3/2 {
				t.Fatalf("%s at %d: malformed %+v", s.Name, m, x)
			}
			band := s.BaseCents * 126 * s.VolPPM / 1_000_000
			if x.Mid < s.BaseCents-band-1 || x.Mid > s.BaseCents+band+1 {
				t.Fatalf("%s at %d: mid %d outside ±%d of %d", s.Name, m, x.Mid, band, s.BaseCents)
			}
			if x != c.At(s.Name, m) {
				differs++
			}
		}
	}
	if differs == 0 {
		t.Fatal("another seed prints the same tape")
	}
}

// The published formula, pinned: these values are what every installation
// with the default seed prints, and documentation quotes them.
func TestTheDefaultTapeIsReproducible(t *testing.T) {
	tape := NewTape([]byte(DefaultSeed), DefaultSymbols)
	m := Minute(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	got := tape.At("ETH-USD", m)
	if got != goldenETH {
		t.Fatalf("ETH-USD at 2025-01-01T00:00Z = %#v, want %#v", got, goldenETH)
	}
	if tape.At("BTC-USD", m) != goldenBTC {
		t.Fatalf("BTC-USD at 2025-01-01T00:00Z = %#v, want %#v", tape.At("BTC-USD", m), goldenBTC)
	}
}

func TestAFillNeverPrintsOutsideTheBidAskOfItsMinute(t *testing.T) {
	forEachBackend(t, "10000000", func(t *testing.T, f *fixture) {
		var ids []string
		for _, s := range DefaultSymbols {
			top := f.top(s.Name)
			for _, req := range []OrderRequest{
				{Symbol: s.Name, Side: SideBuy, Type: TypeMarket, Qty: decimal.Format(s.DepthQty*3, QtyPlaces), TimeInForce: TIFGTC},
				{Symbol: s.Name, Side: SideBuy, Type: TypeLimit, Qty: decimal.Format(s.DepthQty, QtyPlaces), LimitPrice: price(top.Mid - top.Mid/200), TimeInForce: TIFGTC},
			} {
				ids = append(ids, f.order(book, req).Order.ID)
			}
			q := f.quote(book, QuoteRequest{Symbol: s.Name, Side: SideBuy, Qty: "0.5"})
			f.clock.Advance(14 * time.Second)
			ids = append(ids, f.order(book, OrderRequest{QuoteID: q.ID}).Order.ID)
		}
		for i := 0; i < 90; i++ {
			f.clock.Advance(time.Minute)
			f.recheck()
		}
		fills := 0
		for _, id := range ids {
			o := f.rec(book, id)
			for _, fl := range o.Fills {
				top := f.tape.At(o.Symbol, fl.Minute)
				if fl.Price < top.Bid || fl.Price > top.Ask {
					t.Fatalf("%s fill at %d outside [%d, %d] of minute %d", o.ID, fl.Price, top.Bid, top.Ask, fl.Minute)
				}
				if o.QuoteID == "" && fl.Minute != Minute(fl.At) {
					t.Fatalf("%s fill at %s priced from minute %d", o.ID, fl.At, fl.Minute)
				}
				fills++
			}
		}
		if fills < 9 {
			t.Fatalf("only %d fills: the test proves little", fills)
		}
	})
}

func TestAFirmQuoteFillsAtExactlyItsPriceAndOnlyOnce(t *testing.T) {
	forEachBackend(t, "1000000", func(t *testing.T, f *fixture) {
		ctx := context.Background()
		f.clock.Set(f.clock.Now().Truncate(time.Minute).Add(55 * time.Second))
		q := f.quote(book, QuoteRequest{Symbol: "BTC-USD", Side: SideBuy, Qty: "0.25"})
		if !q.Firm || q.Price != q.Ask || q.ExpiresAt.Sub(f.clock.Now()) > QuoteTTL {
			t.Fatalf("quote %+v", q)
		}
		f.clock.Advance(10 * time.Second) // into the next minute, whose ask differs
		res := f.order(book, OrderRequest{QuoteID: q.ID})
		o := res.Order
		if o.Status != StatusFilled || o.FilledQty != "0.25" || *o.FilledAvgPrice != q.Price || len(o.Fills) != 1 || o.Fills[0].Price != q.Price || o.Fills[0].Notional != q.EstimatedTotal {
			t.Fatalf("order %+v, quote %+v", o, q)
		}
		_, err := f.svc.CreateOrder(ctx, book, Submission{OrderRequest: OrderRequest{QuoteID: q.ID}})
		if code(err) != apierr.QuoteAlreadyUsed {
			t.Fatalf("second use: %v", err)
		}
		late := f.quote(book, QuoteRequest{Symbol: "ETH-USD", Side: SideBuy, Notional: "1000"})
		f.clock.Advance(QuoteTTL)
		if _, err := f.svc.CreateOrder(ctx, book, Submission{OrderRequest: OrderRequest{QuoteID: late.ID}}); code(err) != apierr.QuoteExpired {
			t.Fatalf("expired quote: %v", err)
		}
		if _, err := f.svc.CreateOrder(ctx, Scope{AccountID: "acct_B"}, Submission{OrderRequest: OrderRequest{QuoteID: late.ID}}); code(err) != apierr.ValidationFailed {
			t.Fatalf("another book's quote: %v", err)
		}
	})
}

func TestConcurrentOrdersOnOneQuoteFillOnce(t *testing.T) {
	forEachBackend(t, "1000000", func(t *testing.T, f *fixture) {
		q := f.quote(book, QuoteRequest{Symbol: "ETH-USD", Side: SideBuy, Qty: "1"})
		var wg sync.WaitGroup
		var mu sync.Mutex
		filled, used := 0, 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := f.svc.CreateOrder(context.Background(), book, Submission{OrderRequest: OrderRequest{QuoteID: q.ID}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && res.Order.Status == StatusFilled:
					filled++
				case code(err) == apierr.QuoteAlreadyUsed:
					used++
				default:
					t.Errorf("unexpected %v %+v", err, res)
				}
			}()
		}
		wg.Wait()
		if filled != 1 || used != 7 {
			t.Fatalf("filled %d, already used %d", filled, used)
		}
	})
}

func TestABigMarketOrderFillsPartiallyOnEachMinutesDepth(t *testing.T) {
	forEachBackend(t, "100000000", func(t *testing.T, f *fixture) {
		depth := f.top("BTC-USD").Depth
		ioc := f.order(book, OrderRequest{Symbol: "BTC-USD", Side: SideBuy, Type: TypeMarket, Qty: "5", TimeInForce: TIFIOC}).Order
		if ioc.Status != StatusExpired || ioc.FilledQty != decimal.Format(min(depth, qty("5")), QtyPlaces) {
			t.Fatalf("ioc: %+v with depth %d", ioc, depth)
		}
		gtc := f.order(book, OrderRequest{Symbol: "BTC-USD", Side: SideBuy, Type: TypeMarket, Qty: "5", TimeInForce: TIFGTC}).Order
		if gtc.Status != StatusPartiallyFilled {
			t.Fatalf("gtc after one minute: %+v", gtc)
		}
		for i := 0; i < 10 && gtc.Status != StatusFilled; i++ {
			f.clock.Advance(time.Minute)
			gtc = f.get(book, gtc.ID)
		}
		if gtc.Status != StatusFilled || gtc.FilledQty != "5" || len(gtc.Fills) < 2 {
			t.Fatalf("gtc: %+v", gtc)
		}
		for _, fl := range f.rec(book, gtc.ID).Fills {
			if d := f.tape.At("BTC-USD", fl.Minute).Depth; fl.Qty > d {
				t.Fatalf("fill %d above depth %d", fl.Qty, d)
			}
		}
	})
}

// firstCross finds the first minute after m whose ask is at or below a
// limit set a little under the current ask.
func firstCross(tape *Tape, symbol string, m int64) (limit int64, at int64) {
	ask := tape.At(symbol, m).Ask
	for k := int64(1); k < 300; k++ {
		if a := tape.At(symbol, m+k).Ask; a < ask {
			limit = a
			for j := int64(1); j <= k; j++ {
				if tape.At(symbol, m+j).Ask <= limit {
					return limit, m + j
				}
			}
		}
	}
	return 0, 0
}

func TestALimitOrderFillsOnlyWhenTheTapeCrosses(t *testing.T) {
	forEachBackend(t, "10000000", func(t *testing.T, f *fixture) {
		// The tape depends on the minute: a stretch that only rises has no
		// crossing, so move on to one that has.
		limit, cross := firstCross(f.tape, "ETH-USD", Minute(f.clock.Now()))
		for range 50 {
			if cross != 0 {
				break
			}
			f.clock.Advance(300 * time.Minute)
			limit, cross = firstCross(f.tape, "ETH-USD", Minute(f.clock.Now()))
		}
		if cross == 0 {
			t.Fatal("no crossing in 250 hours of tape")
		}
		o := f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeLimit, Qty: "1", LimitPrice: price(limit), TimeInForce: TIFGTC}).Order
		if o.Status != StatusNew {
			t.Fatalf("placed: %+v", o)
		}
		for Minute(f.clock.Now()) < cross-1 {
			f.clock.Advance(time.Minute)
			f.recheck()
			if got := f.rec(book, o.ID); got.FilledQty != 0 {
				t.Fatalf("filled at minute %d before the cross at %d", Minute(f.clock.Now()), cross)
			}
		}
		f.clock.Advance(time.Minute)
		f.recheck()
		r := f.rec(book, o.ID)
		if r.FilledQty == 0 || r.Fills[0].Minute != cross || r.Fills[0].Price > limit {
			t.Fatalf("at the cross (minute %d, limit %d): %+v", cross, limit, r)
		}
	})
}

func TestTimeInForce(t *testing.T) {
	forEachBackend(t, "100000000", func(t *testing.T, f *fixture) {
		top := f.top("SOL-USD")
		fok := f.order(book, OrderRequest{Symbol: "SOL-USD", Side: SideBuy, Type: TypeMarket, Qty: decimal.Format(top.Depth+1, QtyPlaces), TimeInForce: TIFFOK})
		if fok.Order.Status != StatusExpired || fok.Order.FilledQty != "0" {
			t.Fatalf("fok beyond depth: %+v", fok.Order)
		}
		fokAll := f.order(book, OrderRequest{Symbol: "SOL-USD", Side: SideBuy, Type: TypeMarket, Qty: decimal.Format(top.Depth, QtyPlaces), TimeInForce: TIFFOK}).Order
		if fokAll.Status != StatusFilled {
			t.Fatalf("fok within depth: %+v", fokAll)
		}
		far := price(top.Bid / 2)
		ioc := f.order(book, OrderRequest{Symbol: "SOL-USD", Side: SideBuy, Type: TypeLimit, Qty: "1", LimitPrice: far, TimeInForce: TIFIOC}).Order
		day := f.order(book, OrderRequest{Symbol: "SOL-USD", Side: SideBuy, Type: TypeLimit, Qty: "1", LimitPrice: far, TimeInForce: TIFDay}).Order
		gtc := f.order(book, OrderRequest{Symbol: "SOL-USD", Side: SideBuy, Type: TypeLimit, Qty: "1", LimitPrice: far, TimeInForce: TIFGTC}).Order
		if ioc.Status != StatusExpired || day.Status != StatusNew || gtc.Status != StatusNew {
			t.Fatalf("ioc %s, day %s, gtc %s", ioc.Status, day.Status, gtc.Status)
		}
		y, mo, d := f.clock.Now().Date()
		midnight := time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
		if !day.ExpiresAt.Equal(midnight) {
			t.Fatalf("day order expires %s, want %s", day.ExpiresAt, midnight)
		}
		before := f.buyingPower(book)
		f.clock.Set(midnight.Add(-time.Second))
		f.recheck()
		if f.get(book, day.ID).Status != StatusNew {
			t.Fatal("day order expired before midnight")
		}
		f.clock.Set(midnight)
		ts := f.recheck()
		if got := f.get(book, day.ID); got.Status != StatusExpired || got.ExpiresAt != nil {
			t.Fatalf("day order after midnight: %+v", got)
		}
		if len(ts) != 1 || ts[0].To != StatusExpired {
			t.Fatalf("transitions %+v", ts)
		}
		if f.get(book, gtc.ID).Status != StatusNew {
			t.Fatal("gtc order expired at midnight")
		}
		want, _ := decimal.Parse(before, MoneyPlaces, true)
		want += top.Bid / 2 * qtyUnit
		if got := f.buyingPower(book); got != decimal.Format(want, MoneyPlaces) {
			t.Fatalf("buying power after expiry %s, want %s", got, decimal.Format(want, MoneyPlaces))
		}
	})
}

func TestBuyingPowerIsExactUnder32ConcurrentOrders(t *testing.T) {
	forEachBackend(t, "1050", func(t *testing.T, f *fixture) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		count := map[string]int{}
		for i := 0; i < 32; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := f.svc.CreateOrder(context.Background(), book, Submission{OrderRequest: OrderRequest{
					Symbol: "ETH-USD", Side: SideBuy, Type: TypeLimit, Qty: "1", LimitPrice: "100", TimeInForce: TIFGTC}})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				count[res.Order.Status]++
				if res.Order.Status == StatusRejected && *res.Order.RejectReason != RejectBuyingPower {
					t.Errorf("rejected for %s", *res.Order.RejectReason)
				}
			}()
		}
		wg.Wait()
		if count[StatusNew] != 10 || count[StatusRejected] != 22 {
			t.Fatalf("admitted %v", count)
		}
		if bp := f.buyingPower(book); bp != "50" {
			t.Fatalf("buying power %s, want 50", bp)
		}
	})
}

func TestSellsNeedThePositionAndNeverShort(t *testing.T) {
	forEachBackend(t, "1000000", func(t *testing.T, f *fixture) {
		short := f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideSell, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC}).Order
		if short.Status != StatusRejected || *short.RejectReason != RejectPosition {
			t.Fatalf("short sale: %+v", short)
		}
		f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "2", TimeInForce: TIFIOC})
		top := f.top("ETH-USD")
		resting := f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideSell, Type: TypeLimit, Qty: "1.5", LimitPrice: price(top.Ask * 2), TimeInForce: TIFGTC}).Order
		if resting.Status != StatusNew {
			t.Fatalf("resting sell: %+v", resting)
		}
		over := f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideSell, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC}).Order
		if over.Status != StatusRejected {
			t.Fatalf("selling quantity promised to a resting sell: %+v", over)
		}
		rest := f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideSell, Type: TypeMarket, Qty: "0.5", TimeInForce: TIFIOC}).Order
		if rest.Status != StatusFilled {
			t.Fatalf("selling the free quantity: %+v", rest)
		}
	})
}

func TestPositionsEqualTheReplayedSumOfFills(t *testing.T) {
	forEachBackend(t, "10000000", func(t *testing.T, f *fixture) {
		var orderIDs []string
		steps := []OrderRequest{
			{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "3.33333333", TimeInForce: TIFIOC},
			{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Notional: "1234.56", TimeInForce: TIFDay},
			{Symbol: "ETH-USD", Side: SideSell, Type: TypeMarket, Qty: "1.00000007", TimeInForce: TIFIOC},
			{Symbol: "BTC-USD", Side: SideBuy, Type: TypeMarket, Qty: "4", TimeInForce: TIFGTC},
			{Symbol: "ETH-USD", Side: SideSell, Type: TypeMarket, Qty: "0.7", TimeInForce: TIFGTC},
			{Symbol: "BTC-USD", Side: SideSell, Type: TypeMarket, Qty: "1.3", TimeInForce: TIFDay},
		}
		for _, s := range steps {
			orderIDs = append(orderIDs, f.order(book, s).Order.ID)
			f.clock.Advance(37 * time.Second)
			f.recheck()
		}
		for i := 0; i < 5; i++ {
			f.clock.Advance(time.Minute)
			f.recheck()
		}
		type sums struct{ qty, money int64 }
		want := map[string]*sums{}
		var cashOut, reserved int64
		for _, id := range orderIDs {
			o := f.rec(book, id)
			s := want[o.Symbol]
			if s == nil {
				s = &sums{}
				want[o.Symbol] = s
			}
			for _, fl := range o.Fills {
				if o.Side == SideBuy {
					s.qty += fl.Qty
					s.money += fl.Qty * fl.Price
					cashOut += fl.Qty * fl.Price
				} else {
					s.qty -= fl.Qty
					s.money -= fl.Qty * fl.Price
					cashOut -= fl.Qty * fl.Price
				}
			}
			reserved += o.Reserved
		}
		for symbol, s := range want {
			it, err := f.st.Get(context.Background(), book.key("pos#"+symbol))
			if err != nil {
				t.Fatal(err)
			}
			p := decodePosition(it)
			// Average cost moves cost basis into realized P&L on each sale;
			// their difference is what the fills paid, in any order.
			if p.Qty != s.qty || p.Cost-p.Realized != s.money {
				t.Fatalf("%s position %+v, fills say qty %d and net money %d", symbol, p, s.qty, s.money)
			}
			if p.Free > p.Qty {
				t.Fatalf("%s free %d above qty %d", symbol, p.Free, p.Qty)
			}
		}
		if bp := f.buyingPower(book); bp != decimal.Format(10_000_000*moneyUnit-cashOut-reserved, MoneyPlaces) {
			t.Fatalf("buying power %s; fills spent %d and open orders reserve %d", bp, cashOut, reserved)
		}
		ps, err := f.svc.Positions(context.Background(), book)
		if err != nil || len(ps) != 2 {
			t.Fatalf("positions %+v %v", ps, err)
		}
	})
}

func TestRecheckAppliesEachFillOnce(t *testing.T) {
	forEachBackend(t, "100000000", func(t *testing.T, f *fixture) {
		o := f.order(book, OrderRequest{Symbol: "BTC-USD", Side: SideBuy, Type: TypeMarket, Qty: "20", TimeInForce: TIFGTC}).Order
		f.clock.Advance(3 * time.Minute)
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				var err error
				if i%2 == 0 {
					_, err = f.svc.Recheck(context.Background(), f.clock.Now())
				} else {
					_, err = f.svc.GetOrder(context.Background(), book, o.ID)
				}
				if err != nil {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		r := f.rec(book, o.ID)
		if len(r.Fills) != 4 {
			t.Fatalf("%d fills after 4 minutes", len(r.Fills))
		}
		seen := map[int64]bool{}
		var sum int64
		for _, fl := range r.Fills {
			if seen[fl.Minute] {
				t.Fatalf("minute %d filled twice", fl.Minute)
			}
			seen[fl.Minute] = true
			sum += fl.Qty
		}
		it, err := f.st.Get(context.Background(), book.key("pos#BTC-USD"))
		if err != nil || decodePosition(it).Qty != sum || r.FilledQty != sum {
			t.Fatalf("position %v, filled %d, fills %d (%v)", it, r.FilledQty, sum, err)
		}
		if ts := f.recheck(); len(ts) != 0 {
			t.Fatalf("a second recheck at the same time changed %+v", ts)
		}
	})
}

func TestAnotherBooksOrdersAreNotFoundAndItsPositionsAbsent(t *testing.T) {
	forEachBackend(t, "1000000", func(t *testing.T, f *fixture) {
		o := f.order(book, OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC}).Order
		for _, other := range []Scope{{AccountID: "acct_A", ProjectID: "prj_2"}, {AccountID: "acct_A"}, {AccountID: "acct_B", ProjectID: "prj_1"}} {
			if _, err := f.svc.GetOrder(context.Background(), other, o.ID); code(err) != apierr.NotFound {
				t.Fatalf("%+v reads the order: %v", other, err)
			}
			ps, err := f.svc.Positions(context.Background(), other)
			if err != nil || len(ps) != 0 {
				t.Fatalf("%+v sees positions %+v %v", other, ps, err)
			}
			list, _, err := f.svc.ListOrders(context.Background(), other, 100, "")
			if err != nil || len(list) != 0 {
				t.Fatalf("%+v lists %+v %v", other, list, err)
			}
			if bp := f.buyingPower(other); bp != "1000000" {
				t.Fatalf("%+v buying power %s", other, bp)
			}
		}
		if list, _, err := f.svc.ListOrders(context.Background(), book, 100, ""); err != nil || len(list) != 1 {
			t.Fatalf("own list %+v %v", list, err)
		}
	})
}

func TestARetriedCreateWithItsDedupeKeyTradesOnce(t *testing.T) {
	forEachBackend(t, "1000000", func(t *testing.T, f *fixture) {
		f.openAccount(book.AccountID, 1_000_000)
		sub := Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC, ClientOrderID: "c-1"},
			DedupeKey: "key_1:idem-1", CreditsMicro: 250_000}
		first, err := f.svc.CreateOrder(context.Background(), book, sub)
		if err != nil {
			t.Fatal(err)
		}
		if tr := first.Transitions[0]; tr.Credit != CreditCapture || tr.HoldID == "" || first.Order.ChargedCredits != "0.25" {
			t.Fatalf("first fill did not ask to capture: %+v %+v", tr, first.Order)
		}
		again, err := f.svc.CreateOrder(context.Background(), book, sub)
		if err != nil || !again.Replayed || again.Order.ID != first.Order.ID || len(again.Transitions) != 0 {
			t.Fatalf("retry: %+v %v", again, err)
		}
		sub.DedupeKey = "key_1:idem-2"
		if _, err := f.svc.CreateOrder(context.Background(), book, sub); code(err) != apierr.Conflict {
			t.Fatalf("clientOrderId reused: %v", err)
		}
		it, err := f.st.Get(context.Background(), book.key("pos#ETH-USD"))
		if err != nil || decodePosition(it).Qty != qty("1") {
			t.Fatalf("position after a retried create: %v %v", it, err)
		}
		if got := f.balance(book.AccountID); got != 750_000 {
			t.Fatalf("balance %d after one charged order retried, want 750000", got)
		}
	})
}

func TestInvalidOrdersAreRefusedBeforeAnyWrite(t *testing.T) {
	f := newFixture(t, teststoresEmbedded(), "1000")
	cases := map[string]OrderRequest{
		"exponent qty":       {Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1e2", TimeInForce: TIFIOC},
		"negative qty":       {Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "-1", TimeInForce: TIFIOC},
		"too precise qty":    {Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "0.000000001", TimeInForce: TIFIOC},
		"too precise limit":  {Symbol: "ETH-USD", Side: SideBuy, Type: TypeLimit, Qty: "1", LimitPrice: "10.001", TimeInForce: TIFGTC},
		"unknown symbol":     {Symbol: "DOGE-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC},
		"qty and notional":   {Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", Notional: "10", TimeInForce: TIFIOC},
		"limit by notional":  {Symbol: "ETH-USD", Side: SideBuy, Type: TypeLimit, Notional: "10", LimitPrice: "10", TimeInForce: TIFGTC},
		"market with limit":  {Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", LimitPrice: "10", TimeInForce: TIFIOC},
		"unknown tif":        {Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: "opg"},
		"beyond depth limit": {Symbol: "BTC-USD", Side: SideBuy, Type: TypeMarket, Qty: "1000", TimeInForce: TIFIOC},
	}
	for name, req := range cases {
		if _, err := f.svc.CreateOrder(context.Background(), book, Submission{OrderRequest: req}); code(err) != apierr.ValidationFailed {
			t.Errorf("%s: %v", name, err)
		}
	}
	if list, _, _ := f.svc.ListOrders(context.Background(), book, 100, ""); len(list) != 0 {
		t.Fatalf("invalid orders were written: %+v", list)
	}
}

// tableOutbox records each event as an item of the order's own store, in
// the transaction it is handed to, as webhooks.Repo's outbox does.
type tableOutbox struct{ n atomic.Int64 }

func (o *tableOutbox) Outboxed(accountID, _, event string, data any) ([]store.Op, func(context.Context), error) {
	it := store.NewItem(store.Key{PK: "evo#test", SK: fmt.Sprintf("%s#%s#%d", data.(*Order).ID, event, o.n.Add(1))})
	return []store.Op{store.PutOp(it)}, func(context.Context) {}, nil
}

// crashAfter makes the next order transaction commit and then fail, as a
// process killed before its answer does.
type crashAfter struct {
	store.Store
	armed bool
}

func (c *crashAfter) Transact(ctx context.Context, ops []store.Op) error {
	err := c.Store.Transact(ctx, ops)
	if c.armed && err == nil {
		c.armed = false
		return errors.New("killed after the commit")
	}
	return err
}

// An order's events commit with its changes: an order whose creation
// committed but whose answer was lost has its trading.order.filled event
// already, and the retry with its dedupe key, which finds the order and
// replays it, adds none; a later recheck of a resting order records each
// transition once.
func TestAnOrdersEventsCommitWithItsChangesAndARetryAddsNone(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			f := newFixture(t, b, "1000000")
			crash := &crashAfter{Store: f.st}
			out := &tableOutbox{}
			svc, err := New(Config{Store: crash, Venue: &Paper{Tape: f.tape}, PaperCash: "1000000", Now: f.clock.Now, Outbox: out})
			if err != nil {
				t.Fatal(err)
			}
			f.openAccount(book.AccountID, 1_000_000)
			sub := Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC},
				DedupeKey: "key_1:idem-events", CreditsMicro: 250_000}
			crash.armed = true
			if _, err := svc.CreateOrder(context.Background(), book, sub); err == nil {
				t.Fatal("the killed create answered")
			}
			again, err := svc.CreateOrder(context.Background(), book, sub)
			if err != nil || !again.Replayed || again.Order.Status != StatusFilled {
				t.Fatalf("retry: %+v %v", again, err)
			}
			page, err := f.st.Query(context.Background(), store.Query{PK: "evo#test"})
			if err != nil {
				t.Fatal(err)
			}
			var events []string
			for _, it := range page.Items {
				events = append(events, it.Key().SK)
			}
			if len(events) != 1 || !strings.HasPrefix(events[0], again.Order.ID+"#trading.order.filled#") {
				t.Fatalf("events %v; want the one filled event of %s, committed with the order", events, again.Order.ID)
			}
		})
	}
}

// noting is a request that adds up what it is charged.
type noting struct{ charged int64 }

func (n *noting) Attribution() credits.Attribution {
	return credits.Attribution{RequestID: "req_1", KeyPath: []string{"key_1"}}
}
func (n *noting) Charged(micro int64) { n.charged += micro }

// A retry that finds the order its call's dead attempt created (that
// attempt's answer, with the audit event carrying its hold, never left)
// answers for the call: its own event carries the hold, as the dead
// attempt's would have, so the charge is on an event once.
func TestARetryThatFindsItsDeadAttemptsOrderCarriesItsHold(t *testing.T) {
	forEachBackend(t, "1000000", func(t *testing.T, f *fixture) {
		f.openAccount(book.AccountID, 1_000_000)
		sub := Submission{OrderRequest: OrderRequest{Symbol: "ETH-USD", Side: SideBuy, Type: TypeMarket, Qty: "1", TimeInForce: TIFIOC},
			DedupeKey: "key_1:idem-dead", CreditsMicro: 250_000}
		dead, retry := &noting{}, &noting{}
		if _, err := f.svc.CreateOrder(credits.WithRequest(context.Background(), dead), book, sub); err != nil {
			t.Fatal(err)
		}
		again, err := f.svc.CreateOrder(credits.WithRequest(context.Background(), retry), book, sub)
		if err != nil || !again.Replayed {
			t.Fatalf("retry: %+v %v", again, err)
		}
		if dead.charged != 250_000 || retry.charged != 250_000 {
			t.Fatalf("the dead attempt's event would carry %d, the retry's carries %d; want the hold, 250000, on each", dead.charged, retry.charged)
		}
		if got := f.balance(book.AccountID); got != 750_000 {
			t.Fatalf("balance %d, want 750000: one order charged once", got)
		}
	})
}
