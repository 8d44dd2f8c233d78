package tradingapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/trading"
	"platformapi/shared/harness/apitest"
)

func post(e *apitest.Env, key, path string, body any, headers map[string]string) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v1" + path, Key: key, Idem: apitest.Idem(), Body: body, Headers: headers})
}

func get(e *apitest.Env, key, path string, headers map[string]string) *apitest.Resp {
	return e.Do(apitest.Req{Method: "GET", Path: "/v1" + path, Key: key, Headers: headers})
}

// project creates a project and returns the header that selects it.
func project(e *apitest.Env, root, name string) map[string]string {
	id := e.Must(post(e, root, "/projects", map[string]any{"name": name}, nil), 201).Str("id")
	return map[string]string{"X-Service-Project": id}
}

// order decodes an order response.
func order(t *testing.T, r *apitest.Resp) trading.Order {
	t.Helper()
	var o trading.Order
	if err := json.Unmarshal(r.Raw, &o); err != nil {
		t.Fatalf("order %s: %v", r.Raw, err)
	}
	return o
}

func qty(t *testing.T, s string) int64 {
	t.Helper()
	v, err := decimal.Parse(s, trading.QtyPlaces, false)
	if err != nil {
		t.Fatalf("qty %q: %v", s, err)
	}
	return v
}

// positions maps symbol to qty.
func positions(t *testing.T, e *apitest.Env, key string, h map[string]string) map[string]int64 {
	t.Helper()
	var body struct{ Data []trading.Position }
	if err := json.Unmarshal(e.Must(get(e, key, "/trading/positions", h), 200).Raw, &body); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range body.Data {
		out[p.Symbol] = qty(t, p.Qty)
	}
	return out
}

// tape is the paper venue the test server trades on.
var tape = trading.NewTape([]byte(trading.DefaultSeed), trading.DefaultSymbols)

func TestAnOrderOnAFirmQuoteFillsAtExactlyItsPriceOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		p := project(e, root, "desk")
		q := e.Must(post(e, root, "/trading/quotes", map[string]any{"symbol": "ETH-USD", "side": "buy", "qty": "0.5"}, p), 201)
		if q.Body["firm"] != true || q.Str("price") != q.Str("ask") || !time.Now().Add(time.Hour).After(e.Clock.Now()) {
			t.Fatalf("quote %s", q.Raw)
		}
		exp, _ := time.Parse(time.RFC3339Nano, q.Str("expiresAt"))
		if d := exp.Sub(e.Clock.Now()); d <= 0 || d > 15*time.Second {
			t.Fatalf("quote lives %s", d)
		}
		e.Clock.Advance(10 * time.Second) // the tape may have moved to another minute: the quote holds
		r := e.Must(post(e, root, "/trading/orders", map[string]any{"quoteId": q.Str("id")}, p), 201)
		o := order(t, r)
		if o.Status != trading.StatusFilled || len(o.Fills) != 1 || o.Fills[0].Price != q.Str("price") || o.FilledQty != "0.5" || o.Fills[0].Notional != q.Str("estimatedTotal") {
			t.Fatalf("order on quote %s at %s: %s", q.Str("id"), q.Str("price"), r.Raw)
		}
		if o.ChargedCredits != "0.1" {
			t.Fatalf("charged %s, want 0.1", o.ChargedCredits)
		}
		if bal := e.Balance(root); bal != 9.9 {
			t.Fatalf("balance %v after one order, want 9.9", bal)
		}
		e.Must(post(e, root, "/trading/orders", map[string]any{"quoteId": q.Str("id")}, p), 409, "quote_already_used")
		late := e.Must(post(e, root, "/trading/quotes", map[string]any{"symbol": "BTC-USD", "side": "buy", "qty": "0.01"}, p), 201)
		e.Clock.Advance(16 * time.Second)
		e.Must(post(e, root, "/trading/orders", map[string]any{"quoteId": late.Str("id")}, p), 409, "quote_expired")
		if got := positions(t, e, root, p); len(got) != 1 || got["ETH-USD"] != qty(t, "0.5") {
			t.Fatalf("positions %v", got)
		}
	})
}

func TestABigMarketOrderFillsInPartsAndPositionsEqualItsFills(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		depth := tape.At("ETH-USD", trading.Minute(e.Clock.Now())).Depth
		want := depth + depth/2
		r := e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market",
			"qty": decimal.Format(want, trading.QtyPlaces), "timeInForce": "day"}, nil), 201)
		o := order(t, r)
		if o.Status != trading.StatusPartiallyFilled || qty(t, o.FilledQty) != depth || o.ChargedCredits != "0.1" {
			t.Fatalf("after the first minute: %s", r.Raw)
		}
		for i := 0; i < 10 && o.Status != trading.StatusFilled; i++ {
			e.Clock.Advance(time.Minute)
			o = order(t, e.Must(get(e, root, "/trading/orders/"+o.ID, nil), 200))
		}
		if o.Status != trading.StatusFilled || qty(t, o.FilledQty) != want || len(o.Fills) < 2 {
			t.Fatalf("never filled: %+v", o)
		}
		var sum int64
		for _, f := range o.Fills {
			sum += qty(t, f.Qty)
		}
		if got := positions(t, e, root, nil); sum != want || got["ETH-USD"] != sum {
			t.Fatalf("positions %v, fills sum %d, want %d", got, sum, want)
		}
		if bal := e.Balance(root); bal != 9.9 {
			t.Fatalf("balance %v: a partially filled order is charged once", bal)
		}
	})
}

func TestARestingLimitOrderIsFilledByTheRecheckWorker(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		// The lowest ask of the next hour, if below the ask now, is a limit
		// that rests now and fills when the tape gets there.
		var limit, at int64
		for try := 0; try < 60 && limit == 0; try++ {
			m := trading.Minute(e.Clock.Now())
			low, lowAt := tape.At("ETH-USD", m+1).Ask, m+1
			for k := m + 2; k <= m+60; k++ {
				if a := tape.At("ETH-USD", k).Ask; a < low {
					low, lowAt = a, k
				}
			}
			if low < tape.At("ETH-USD", m).Ask {
				limit, at = low, lowAt
			} else {
				e.Clock.Advance(time.Minute)
			}
		}
		if limit == 0 {
			t.Fatal("the tape never dips within an hour")
		}
		r := e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "limit", "qty": "1",
			"limitPrice": decimal.Format(limit, trading.PricePlaces), "timeInForce": "gtc"}, nil), 201)
		o := order(t, r)
		if o.Status != trading.StatusNew || o.FilledQty != "0" || o.ChargedCredits != "0" {
			t.Fatalf("a limit below the ask should rest: %s", r.Raw)
		}
		worker, err := trading.New(trading.Config{Store: e.Store, PaperCash: apitest.PaperCash, Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Duration(at-trading.Minute(e.Clock.Now())) * time.Minute)
		ts, err := worker.Recheck(context.Background(), e.Clock.Now())
		if err != nil || len(ts) != 1 || ts[0].Order.ID != o.ID || ts[0].To != trading.StatusFilled || trading.EventName(ts[0]) != "trading.order.filled" {
			t.Fatalf("recheck: %+v %v", ts, err)
		}
		o = order(t, e.Must(get(e, root, "/trading/orders/"+o.ID, nil), 200))
		if o.Status != trading.StatusFilled || o.Fills[0].Price > decimal.Format(limit, trading.PricePlaces) || o.ChargedCredits != "0.1" {
			t.Fatalf("after the recheck: %+v", o)
		}
		if bal := e.Balance(root); bal != 9.9 {
			t.Fatalf("balance %v: the hold is captured at the first fill", bal)
		}
	})
}

func TestAnOrderBeyondBuyingPowerIsRejectedAndNotCharged(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		r := e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "BTC-USD", "side": "buy", "type": "market", "qty": "50", "timeInForce": "day"}, nil), 201)
		o := order(t, r)
		if o.Status != trading.StatusRejected || o.RejectReason == nil || *o.RejectReason != trading.RejectBuyingPower || o.ChargedCredits != "0" || len(o.Fills) != 0 {
			t.Fatalf("order beyond buying power: %s", r.Raw)
		}
		if bal := e.Balance(root); bal != 10 {
			t.Fatalf("balance %v after a rejected order, want 10", bal)
		}
		if got := positions(t, e, root, nil); len(got) != 0 {
			t.Fatalf("positions %v", got)
		}
	})
}

func TestARetriedOrderReturnsTheSameOrderAndTradesOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rec := e.RootKey(10, nil)
		key := apitest.Idem()
		body := map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "1", "timeInForce": "ioc"}
		send := func() *apitest.Resp {
			return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/trading/orders", Key: root, Idem: key, Body: body}), 201)
		}
		first := order(t, send())
		again := send()
		if order(t, again).ID != first.ID || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %s %v", again.Raw, again.Header)
		}
		// The stored response is lost (a crash after the order committed,
		// or its record expired): the order's dedupe key still finds it.
		if err := e.Store.Delete(context.Background(), store.Key{PK: "idem#" + rec.Str("id") + "#" + key, SK: "idem"}); err != nil {
			t.Fatal(err)
		}
		lost := send()
		if order(t, lost).ID != first.ID || lost.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry after a lost response: %s", lost.Raw)
		}
		if got := positions(t, e, root, nil); got["ETH-USD"] != qty(t, "1") {
			t.Fatalf("positions %v: traded more than once", got)
		}
		if bal := e.Balance(root); bal != 9.9 {
			t.Fatalf("balance %v: charged more than once", bal)
		}
		list := e.Must(get(e, root, "/trading/orders?limit=10", nil), 200)
		if n := len(list.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d orders listed, want 1", n)
		}
	})
}

func TestAnotherProjectOrAccountSeesNoOrderAndNoPosition(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		mine, theirs := project(e, root, "mine"), project(e, root, "theirs")
		o := order(t, e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "1", "timeInForce": "ioc"}, mine), 201))
		e.Must(get(e, root, "/trading/orders/"+o.ID, mine), 200)
		other, _ := e.RootKey(1, nil)
		for name, c := range map[string]struct {
			key string
			h   map[string]string
		}{"another project": {root, theirs}, "the account level": {root, nil}, "another account": {other, nil}} {
			t.Run(name, func(t *testing.T) {
				e.Must(get(e, c.key, "/trading/orders/"+o.ID, c.h), 404, "not_found")
				if got := positions(t, e, c.key, c.h); len(got) != 0 {
					t.Fatalf("positions %v", got)
				}
				if list := e.Must(get(e, c.key, "/trading/orders", c.h), 200); len(list.Body["data"].([]any)) != 0 {
					t.Fatalf("orders listed: %s", list.Raw)
				}
			})
		}
	})
}

func TestAmountsAreDecimalStringsAndNumbersAreRefused(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		for name, body := range map[string]map[string]any{
			"a quote qty":       {"symbol": "ETH-USD", "side": "buy", "qty": 0.5},
			"an order qty":      {"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": 0.5, "timeInForce": "ioc"},
			"a limit price":     {"symbol": "ETH-USD", "side": "buy", "type": "limit", "qty": "1", "limitPrice": 2500.5, "timeInForce": "gtc"},
			"a quote qty, text": {"symbol": "ETH-USD", "side": "buy", "qty": "1e3"},
		} {
			t.Run(name, func(t *testing.T) {
				path := "/trading/orders"
				if _, ok := body["type"]; !ok {
					path = "/trading/quotes"
				}
				if r := post(e, root, path, body, nil); r.Status != 400 || r.Code() != "validation_failed" {
					t.Fatalf("%d %s", r.Status, r.Raw)
				}
			})
		}
		r := e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "0.00000001", "timeInForce": "ioc"}, nil), 201)
		for _, f := range []string{"qty", "filledQty", "filledAvgPrice"} {
			if _, ok := r.Body[f].(string); !ok {
				t.Fatalf("%s is not a string: %s", f, r.Raw)
			}
		}
		if bal := e.Balance(root); bal != 9.9 {
			t.Fatalf("balance %v", bal)
		}
	})
}

func TestCreditsPerDayCapsOrders(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		child, _ := e.Child(root, map[string]any{"limits": map[string]any{"trading.orders.create": map[string]any{"creditsPerDay": 0.2}}})
		market := map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "0.1", "timeInForce": "ioc"}
		// A rejected order gives its day's credits back.
		e.Must(post(e, child, "/trading/orders", map[string]any{"symbol": "BTC-USD", "side": "buy", "type": "market", "qty": "50", "timeInForce": "ioc"}, nil), 201)
		e.Must(post(e, child, "/trading/orders", market, nil), 201)
		e.Must(post(e, child, "/trading/orders", market, nil), 201)
		r := e.Must(post(e, child, "/trading/orders", market, nil), 429, "limit_exceeded")
		if r.Header.Get("X-Service-Limit-Operation") != "trading.orders.create" {
			t.Fatalf("limit header %v", r.Header)
		}
	})
}

// An order's changes reach the webhooks through the outbox they commit
// with: a market order that fills across two minutes yields exactly one
// trading.order.partially_filled and one trading.order.filled delivery,
// and a replay of its create adds none.
func TestAnOrdersChangesReachTheWebhooksOnceEach(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"url": "https://93.184.216.34/in", "events": []string{"trading.order.new", "trading.order.partially_filled", "trading.order.filled"}}}), 201)
		depth := tape.At("ETH-USD", trading.Minute(e.Clock.Now())).Depth
		body := map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": decimal.Format(depth+depth/2, trading.QtyPlaces), "timeInForce": "day"}
		idem := apitest.Idem()
		o := order(t, e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/trading/orders", Key: root, Idem: idem, Body: body}), 201))
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/trading/orders", Key: root, Idem: idem, Body: body}), 201)
		for i := 0; i < 10 && o.Status != trading.StatusFilled; i++ {
			e.Clock.Advance(time.Minute)
			o = order(t, e.Must(get(e, root, "/trading/orders/"+o.ID, nil), 200))
		}
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhook-deliveries?limit=100", Key: root}), 200)
		got := map[string]int{}
		for _, d := range r.Body["data"].([]any) {
			got[d.(map[string]any)["event"].(string)]++
		}
		if got["trading.order.partially_filled"] != 1 || got["trading.order.filled"] != 1 || len(got) != 2 {
			t.Fatalf("deliveries by event = %v; want one partially_filled and one filled", got)
		}
	})
}
