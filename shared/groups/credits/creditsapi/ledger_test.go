package creditsapi_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/decimal"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/databases/databasesapi/dbtest"
	"platformapi/shared/groups/trading"
	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

func post(e *apitest.Env, key, path string, body any, headers map[string]string) *apitest.Resp {
	e.T.Helper()
	return e.Do(apitest.Req{Method: "POST", Path: "/v1" + path, Key: key, Idem: apitest.Idem(), Body: body, Headers: headers})
}

func get(e *apitest.Env, key, path string) *apitest.Resp {
	e.T.Helper()
	return e.Do(apitest.Req{Method: "GET", Path: "/v1" + path, Key: key})
}

// micro reads an amount the API answered in credits (a JSON number of at
// most six decimals) as exact micro-credits.
func micro(t *testing.T, v any) int64 {
	t.Helper()
	switch n := v.(type) {
	case float64:
		return int64(math.Round(n * 1e6))
	case string:
		m, err := decimal.Parse(n, 6, true)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("not an amount: %#v", v)
	return 0
}

// pages reads every page of a list.
func pages(t *testing.T, e *apitest.Env, key, path string, q url.Values) []map[string]any {
	t.Helper()
	var out []map[string]any
	q.Set("limit", "100")
	for {
		r := e.Must(get(e, key, path+"?"+q.Encode()), 200)
		for _, it := range r.Body["data"].([]any) {
			out = append(out, it.(map[string]any))
		}
		next, _ := r.Body["nextCursor"].(string)
		if next == "" {
			return out
		}
		q.Set("cursor", next)
	}
}

// spent are the four views of what an account spent in [since, until):
// its balance, its audit events, its usage and its ledger.
type spent struct{ balance, audit, usage, ledger int64 }

func reconcile(t *testing.T, e *apitest.Env, root string, granted int64, since, until time.Time) spent {
	t.Helper()
	// No catch-up here: the readers count what settlements committed
	// before they answer.
	s := spent{balance: granted - micro(t, e.Must(get(e, root, "/credits/balance"), 200).Body["balance"])}
	rng := url.Values{"since": {since.Format(time.RFC3339Nano)}, "until": {until.Format(time.RFC3339Nano)}}
	for _, ev := range pages(t, e, root, "/audit-events", rng) {
		s.audit += micro(t, ev["chargedCredits"])
	}
	u := e.Must(get(e, root, "/usage?"+url.Values{"start": {since.Truncate(24 * time.Hour).Format(time.RFC3339)},
		"end": {until.Truncate(24 * time.Hour).Add(24 * time.Hour).Format(time.RFC3339)}, "bucketWidth": {"1d"}}.Encode()), 200)
	for _, b := range u.Body["data"].([]any) {
		for _, r := range b.(map[string]any)["results"].([]any) {
			s.usage += micro(t, r.(map[string]any)["chargedCredits"])
		}
	}
	entries := pages(t, e, root, "/credits/ledger", rng)
	for i, en := range entries {
		if ty := en["type"]; ty != "grant" && ty != "top_up" {
			s.ledger -= micro(t, en["amountCredits"])
		}
		// Newest first, each entry's balance is the older one's plus its amount.
		if i+1 < len(entries) && micro(t, entries[i+1]["balanceAfter"])+micro(t, en["amountCredits"]) != micro(t, en["balanceAfter"]) {
			t.Fatalf("entry %v does not follow %v", en, entries[i+1])
		}
	}
	if len(entries) == 0 || micro(t, entries[0]["balanceAfter"]) != granted-s.balance {
		t.Fatalf("the newest entry's balanceAfter is not the balance: %v", entries[:min(1, len(entries))])
	}
	return s
}

// Every credit is visible: whatever groups charge, at once or settled
// later by a worker, captured or released, the balance spent, the audit
// events, the usage and the ledger agree to the micro-credit.
func TestEveryChargeReconcilesAcrossBalanceAuditUsageAndLedger(t *testing.T) {
	everyChargeReconciles(t, 1)
}

// The same on an account whose balance is split into slices
// (docs/storage-design.md, "Charged calls"): every group's holds, captures
// and releases land on slices, and the four views still agree.
func TestEveryChargeReconcilesOnASlicedAccount(t *testing.T) {
	everyChargeReconciles(t, 8)
}

func everyChargeReconciles(t *testing.T, slices int) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		const granted = 20_000_000
		// The lowest ask of the next hour, below the ask now: a gtc limit
		// there rests now and the recheck fills it later. Found first: it
		// moves the clock, and quotes must not expire meanwhile.
		tape := trading.NewTape([]byte(trading.DefaultSeed), trading.DefaultSymbols)
		// Before the next midnight UTC, when the day order below expires:
		// a recheck past it would expire that order too.
		var dip, dipAt int64
		for dip == 0 {
			now := e.Clock.Now()
			m, last := trading.Minute(now), trading.Minute(now.Truncate(24*time.Hour).Add(24*time.Hour))-1
			low, lowAt := tape.At("ETH-USD", m+1).Ask, m+1
			for k := m + 2; k <= min(m+60, last); k++ {
				if a := tape.At("ETH-USD", k).Ask; a < low {
					low, lowAt = a, k
				}
			}
			if lowAt <= last && low < tape.At("ETH-USD", m).Ask {
				dip, dipAt = low, lowAt
			} else {
				e.Clock.Advance(time.Minute)
			}
		}

		since := e.Clock.Now().Add(-time.Second)
		root, rec := e.RootKey(granted/1_000_000, nil)
		if slices > 1 {
			it, err := e.Store.Get(context.Background(), store.Key{PK: "key#" + rec.Str("id"), SK: "key"})
			if err != nil {
				t.Fatal(err)
			}
			var k struct {
				AccountID string `json:"accountId"`
			}
			if err := it.Doc(&k); err != nil {
				t.Fatal(err)
			}
			if err := credits.NewLedger(e.Store, e.Clock.Now).SetSlices(context.Background(), k.AccountID, slices); err != nil {
				t.Fatal(err)
			}
		}
		project := e.Must(post(e, root, "/projects", map[string]any{"name": "ledger"}, nil), 201).Str("id")
		inProject := map[string]string{"X-Service-Project": project}
		wallet := e.Must(post(e, root, "/wallets", map[string]any{"label": "ledger"}, nil), 201)
		walletID, addr := wallet.Str("id"), common.HexToAddress(wallet.Str("address"))
		for asset, n := range map[string]int64{"ETH": 1e17, "USDC": 5_000_000} {
			if _, err := dev.Faucet().Fund(context.Background(), addr, asset, big.NewInt(n)); err != nil {
				t.Fatal(err)
			}
		}
		e.Must(post(e, root, "/databases/account", map[string]any{}, nil), 201)
		e.Must(post(e, root, "/databases/actions", map[string]any{"actions": []any{
			map[string]any{"type": "migrate", "id": "001", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)"}}}, nil), 200)

		// Two quotes of the whole USDC balance: the first send confirms
		// (captured by the worker), the second fails (released).
		to := common.BigToAddress(big.NewInt(time.Now().UnixNano()))
		whole := func() string {
			return e.Must(post(e, root, "/wallets/"+walletID+"/transactions/quote", map[string]any{"chainId": 1337, "to": to.Hex(), "asset": "USDC", "amount": "4000000"}, nil), 201).Str("id")
		}
		sends := []string{whole(), whole()}
		swapQuote := e.Must(post(e, root, "/swaps/quote", map[string]any{"walletId": walletID, "fromChainId": 1337, "toChainId": 1337,
			"fromToken": "USDC", "toToken": "WETH", "fromAmount": "500000", "slippageBps": 100}, nil), 201).Str("id")

		var wg sync.WaitGroup
		var mu sync.Mutex
		var txIDs, runIDs []string
		var swapID, resting string
		par := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
		for i := range 6 {
			par(func() {
				e.Must(post(e, root, "/services/cloud-superbrain/invoke", map[string]any{"operationId": "memory.write",
					"input": map[string]any{"text": fmt.Sprintf("note %d", i)}}, inProject), 200)
			})
		}
		for i := range 2 {
			par(func() {
				id := e.Must(post(e, root, "/runs", map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search",
					"input": map[string]any{"query": fmt.Sprintf("note %d", i)}}, nil), 202).Str("id")
				mu.Lock()
				runIDs = append(runIDs, id)
				mu.Unlock()
			})
		}
		for range 2 {
			par(func() {
				e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "0.01", "timeInForce": "day"}, nil), 201)
			})
		}
		par(func() {
			e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "limit", "qty": "0.01",
				"limitPrice": decimal.Format(dip, trading.PricePlaces), "timeInForce": "gtc"}, nil), 201)
		})
		par(func() {
			// A day order far below the market rests with its hold; the
			// recheck releases it when the day ends.
			resting = e.Must(post(e, root, "/trading/orders", map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "limit", "qty": "0.01",
				"limitPrice": "1", "timeInForce": "day"}, nil), 201).Str("id")
		})
		for _, q := range sends {
			par(func() {
				id := e.Must(post(e, root, "/wallets/"+walletID+"/transactions", map[string]any{"quoteId": q}, nil), 202).Str("id")
				mu.Lock()
				txIDs = append(txIDs, id)
				mu.Unlock()
			})
		}
		par(func() {
			swapID = e.Must(post(e, root, "/swaps", map[string]any{"quoteId": swapQuote}, nil), 202).Str("id")
		})
		par(func() {
			// One writer at a time (a database has a single-writer lease).
			for i := range 3 {
				e.Must(post(e, root, "/databases/actions", map[string]any{"actions": []any{
					map[string]any{"type": "execute", "sql": "INSERT INTO t(v) VALUES (?)", "params": []any{strconv.Itoa(i)}}}}, nil), 200)
				e.Must(post(e, root, "/databases/query", map[string]any{"sql": "SELECT count(*) FROM t"}, nil), 200)
			}
		})
		wg.Wait()

		for _, id := range runIDs {
			if r := e.WaitRun(root, id); r.Str("status") != "succeeded" {
				t.Fatalf("run: %s", r.Raw)
			}
		}
		final := func(path string, done ...string) *apitest.Resp {
			for range 3000 {
				r := e.Must(get(e, root, path), 200)
				for _, d := range done {
					if r.Str("status") == d {
						return r
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Fatalf("%s never final", path)
			return nil
		}
		statuses := map[string]int{}
		for _, id := range txIDs {
			statuses[final("/wallets/"+walletID+"/transactions/"+id, "confirmed", "failed").Str("status")]++
		}
		if statuses["confirmed"] != 1 || statuses["failed"] != 1 {
			t.Fatalf("sends: %v", statuses)
		}
		final("/swaps/"+swapID, "done", "failed")

		// The tape dips: the recheck fills the gtc order and captures its
		// hold. The day ends: the day order expires and its hold is
		// released. Both outside any request.
		worker, err := trading.New(trading.Config{Store: e.Store, PaperCash: apitest.PaperCash, Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Duration(dipAt-trading.Minute(e.Clock.Now())) * time.Minute)
		if ts, err := worker.Recheck(context.Background(), e.Clock.Now()); err != nil || len(ts) != 1 || ts[0].To != trading.StatusFilled {
			t.Fatalf("recheck at the dip: %+v %v", ts, err)
		}
		e.Clock.Advance(25 * time.Hour)
		if _, err := worker.Recheck(context.Background(), e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if o := e.Must(get(e, root, "/trading/orders/"+resting), 200); o.Str("status") != trading.StatusExpired {
			t.Fatalf("resting order: %s", o.Raw)
		}

		s := reconcile(t, e, root, granted, since, e.Clock.Now().Add(time.Second))
		if s.balance <= 0 || s.audit != s.balance || s.usage != s.balance || s.ledger != s.balance {
			t.Fatalf("spent: balance %d, audit %d, usage %d, ledger %d", s.balance, s.audit, s.usage, s.ledger)
		}
		// Work done outside a request (the recheck's fill, a run's step) is
		// an event of its own. (Whether the wallet worker or a read of the
		// transaction settles a send first is a race; either way the
		// charge is counted once, above.)
		rng := url.Values{"since": {since.Format(time.RFC3339Nano)}}
		for _, op := range []string{"trading.orders.fill", "runs.execute"} {
			rng.Set("operation", op)
			if evs := pages(t, e, root, "/audit-events", rng); len(evs) == 0 {
				t.Errorf("no %s event", op)
			}
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev), dbtest.On(0)}})
}

// A key sees the ledger entries its own requests and its descendants'
// caused, and nothing of its siblings'; the root key sees all.
func TestALedgerShowsAKeyItsSubtreeOnly(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(5, nil)
		a, ra := e.Child(root, map[string]any{})
		b, _ := e.Child(root, map[string]any{})
		for _, key := range []string{a, a, b} {
			e.Must(post(e, key, "/services/cloud-superbrain/invoke", map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "x"}}, nil), 200)
		}
		all := pages(t, e, root, "/credits/ledger", url.Values{})
		mine := pages(t, e, a, "/credits/ledger", url.Values{})
		// Each invoke holds its price and captures it; the grant is the root's.
		if len(mine) != 4 || len(all) != 7 {
			t.Fatalf("child sees %d entries, root %d", len(mine), len(all))
		}
		for _, en := range mine {
			if en["keyId"] != ra.Str("id") || en["operation"] != "services.invoke.cloud-superbrain.memory.write" || en["requestId"] == nil {
				t.Fatalf("child sees %v", en)
			}
		}
		holds := pages(t, e, root, "/credits/ledger", url.Values{"type": {"capture"}, "keyId": {ra.Str("id")}})
		if len(holds) != 2 {
			t.Fatalf("%d captures of key a", len(holds))
		}
		e.Must(get(e, a, "/credits/ledger?type=bogus"), 400, "validation_failed")
		e.Must(get(e, a, "/credits/ledger?cursor=bm90LWEtY3Vyc29y"), 400, "validation_failed")
	})
}
