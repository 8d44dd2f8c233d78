package alpaca_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/trading"
	"platformapi/shared/groups/trading/alpaca"
)

// fake is a loopback stand-in for Alpaca's documented API: orders keyed by
// id and by client_order_id (unique, 422 when reused), positions, latest
// crypto quotes, and the two authentication headers on every call.
type fake struct {
	mu       sync.Mutex
	orders   map[string]map[string]any
	byClient map[string]string
	posts    int
}

const keyID, secret = "PKTEST", "s3cret"

func newFake(t *testing.T) (*fake, *httptest.Server) {
	f := &fake{orders: map[string]map[string]any{}, byClient: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("APCA-API-KEY-ID") != keyID || r.Header.Get("APCA-API-SECRET-KEY") != secret {
		http.Error(w, `{"message":"forbidden."}`, http.StatusForbidden)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	reply := func(v any) { w.Header().Set("Content-Type", "application/json"); _ = json.NewEncoder(w).Encode(v) }
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1beta3/crypto/us/latest/quotes":
		quotes := map[string]any{}
		if r.URL.Query().Get("symbols") == "ETH/USD" {
			quotes["ETH/USD"] = json.RawMessage(`{"ap":3000.125,"as":1.5,"bp":2999.5,"bs":2,"t":"2025-01-01T00:00:00Z"}`)
		}
		reply(map[string]any{"quotes": quotes})
	case r.Method == http.MethodPost && r.URL.Path == "/v2/orders":
		f.posts++
		var in map[string]string
		_ = json.NewDecoder(r.Body).Decode(&in)
		if _, dup := f.byClient[in["client_order_id"]]; dup {
			http.Error(w, `{"code":40010001,"message":"client_order_id must be unique"}`, http.StatusUnprocessableEntity)
			return
		}
		id := "alp-" + in["client_order_id"]
		o := map[string]any{"id": id, "client_order_id": in["client_order_id"], "status": "new", "filled_qty": "0",
			"filled_avg_price": nil, "symbol": in["symbol"], "qty": in["qty"], "side": in["side"], "type": in["type"],
			"limit_price": in["limit_price"], "time_in_force": in["time_in_force"], "updated_at": "2025-01-01T00:00:00Z"}
		f.orders[id], f.byClient[in["client_order_id"]] = o, id
		reply(o)
	case r.Method == http.MethodGet && r.URL.Path == "/v2/orders:by_client_order_id":
		id, ok := f.byClient[r.URL.Query().Get("client_order_id")]
		if !ok {
			http.Error(w, `{"message":"order not found"}`, http.StatusNotFound)
			return
		}
		reply(f.orders[id])
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/orders/"):
		o, ok := f.orders[strings.TrimPrefix(r.URL.Path, "/v2/orders/")]
		if !ok {
			http.Error(w, `{"message":"order not found"}`, http.StatusNotFound)
			return
		}
		reply(o)
	case r.Method == http.MethodGet && r.URL.Path == "/v2/positions":
		reply([]map[string]string{{"symbol": "ETHUSD", "qty": "1.5", "avg_entry_price": "3000", "cost_basis": "4500",
			"market_value": "4500.75", "current_price": "3000.5", "unrealized_pl": "0.75"}})
	default:
		http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
	}
}

// fill makes the venue report a cumulative fill.
func (f *fake) fill(clientOrderID, qty, avg, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.orders[f.byClient[clientOrderID]]
	o["filled_qty"], o["filled_avg_price"], o["status"] = qty, avg, status
}

func venue(srv *httptest.Server, secretKey string) *alpaca.Venue {
	return alpaca.New(alpaca.Config{BaseURL: srv.URL, DataURL: srv.URL, KeyID: keyID, Secret: secretKey, Client: srv.Client()})
}

func TestTheLatestQuoteIsReadExactlyFromItsText(t *testing.T) {
	_, srv := newFake(t)
	top, err := venue(srv, secret).Top(context.Background(), "ETH-USD", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// 3000.125 rounds up to the cent for the ask, 2999.5 stays for the bid.
	if top.Ask != 300013 || top.Bid != 299950 || top.Depth != 150000000 {
		t.Fatalf("top %+v", top)
	}
	if _, err := venue(srv, secret).Top(context.Background(), "DOGE-USD", time.Now()); err != trading.ErrUnknownSymbol {
		t.Fatalf("unknown symbol: %v", err)
	}
	if _, err := venue(srv, "wrong").Top(context.Background(), "ETH-USD", time.Now()); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad credentials: %v", err)
	}
}

func TestOrdersFillAsTheVenueReportsAndARetriedSubmitTradesOnce(t *testing.T) {
	fk, srv := newFake(t)
	v := venue(srv, secret)
	now := time.Now().UTC()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := trading.New(trading.Config{Store: st, Venue: v, PaperCash: "100000", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	sc := trading.Scope{AccountID: "acct_A"}
	res, err := svc.CreateOrder(context.Background(), sc, trading.Submission{OrderRequest: trading.OrderRequest{
		Symbol: "ETH-USD", Side: "buy", Type: "limit", Qty: "2", LimitPrice: "3001", TimeInForce: "gtc"}})
	if err != nil || res.Order.Status != trading.StatusNew {
		t.Fatalf("create: %+v %v", res, err)
	}
	id := res.Order.ID
	// The same order submitted again (a crash before we stored the venue's
	// id) finds the first instead of placing a second.
	again, err := v.Submit(context.Background(), &trading.VenueOrder{ID: id, Symbol: "ETH-USD", Side: "buy", Type: "limit", TimeInForce: "gtc", Qty: 200000000, PriceBound: 300100}, now)
	if err != nil || again.VenueID != "alp-"+id || fk.posts != 2 || len(fk.orders) != 1 {
		t.Fatalf("resubmit: %+v %v (%d posts, %d orders)", again, err, fk.posts, len(fk.orders))
	}
	fk.fill(id, "0.5", "3000.1", "partially_filled")
	got, err := svc.GetOrder(context.Background(), sc, id)
	if err != nil || got.Order.Status != trading.StatusPartiallyFilled || got.Order.Fills[0].Price != "3000.1" {
		t.Fatalf("partial: %+v %v", got, err)
	}
	fk.fill(id, "2", "3000.4", "filled")
	got, err = svc.GetOrder(context.Background(), sc, id)
	if err != nil || got.Order.Status != trading.StatusFilled || *got.Order.FilledAvgPrice != "3000.4" || len(got.Order.Fills) != 2 {
		t.Fatalf("filled: %+v %v", got.Order, err)
	}
	// Our fills total exactly Alpaca's 2 × 3000.4: the second fill is 1.5 at 3000.5.
	if got.Order.Fills[1].Qty != "1.5" || got.Order.Fills[1].Price != "3000.5" {
		t.Fatalf("second fill %+v", got.Order.Fills[1])
	}
	if bp, _ := svc.BuyingPower(context.Background(), sc); bp != "93999.2" {
		t.Fatalf("buying power %s", bp)
	}
	ps, err := v.Positions(context.Background())
	if err != nil || len(ps) != 1 || ps[0].Qty != "1.5" {
		t.Fatalf("positions %+v %v", ps, err)
	}
}
