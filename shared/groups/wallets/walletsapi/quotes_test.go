package walletsapi_test

import (
	"strings"
	"testing"
	"time"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// A transaction quote is executed once (409 quote_already_used for any
// other call), only before it expires (409 quote_expired), and the same
// call retried with its Idempotency-Key replays the same transaction.
func TestAQuoteIsUsedOnceBeforeItExpiresAndARetryReplays(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17})
		q := e.Must(txQuote(e, root, id, freshAddress(), "ETH", "1000"), 201)
		if exp, _ := time.Parse(time.RFC3339, q.Str("expiresAt")); exp.Sub(e.Clock.Now()) > 60*time.Second || !exp.After(e.Clock.Now()) {
			t.Fatalf("expiresAt %s at %s", q.Str("expiresAt"), e.Clock.Now())
		}
		idem := apitest.Idem()
		call := apitest.Req{Method: "POST", Path: "/v1/wallets/" + id + "/transactions", Key: root, Idem: idem, Body: map[string]any{"quoteId": q.Str("id")}}
		first := e.Must(e.Do(call), 202)
		again := e.Must(e.Do(call), 202)
		if again.Str("id") != first.Str("id") {
			t.Fatalf("the retry made %s, the call %s", again.Str("id"), first.Str("id"))
		}
		e.Must(send(e, root, id, q.Str("id")), 409, "quote_already_used")
		waitTx(t, e, root, id, first.Str("id"))
		if n := txCount(t, e, root, id); n != 1 {
			t.Fatalf("%d transactions", n)
		}

		late := e.Must(txQuote(e, root, id, freshAddress(), "ETH", "1000"), 201)
		e.Clock.Advance(61 * time.Second)
		e.Must(send(e, root, id, late.Str("id")), 409, "quote_expired")
		if n := txCount(t, e, root, id); n != 1 {
			t.Fatalf("%d transactions", n)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// A send that would fail says so in its quote (the token's revert reason)
// and executing it is 422 simulation_failed, creating nothing.
func TestAFailingSimulationIsQuotedAndRefused(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17, "USDC": 1_000_000})
		credits := micro(e.Balance(root))
		q := e.Must(txQuote(e, root, id, freshAddress(), "USDC", "1000001"), 201)
		sim := q.Body["simulation"].(map[string]any)
		if reason, _ := sim["revertReason"].(string); sim["success"] != false || !strings.Contains(reason, "exceeds balance") {
			t.Fatalf("simulation %v", sim)
		}
		e.Must(send(e, root, id, q.Str("id")), 422, "simulation_failed")
		if n := txCount(t, e, root, id); n != 0 || micro(e.Balance(root)) != credits {
			t.Fatalf("%d transactions, credits %d → %d", n, credits, micro(e.Balance(root)))
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
