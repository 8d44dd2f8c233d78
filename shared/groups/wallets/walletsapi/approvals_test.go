package walletsapi_test

import (
	"math/big"
	"testing"
	"time"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// With require_approval a send waits in pending_approval; the key that
// asked cannot decide it (403 self_approval_denied); approved by a key
// outside its lineage (here one beside it) it goes on by itself to
// confirmed; rejected, it sends nothing and its credits are released.
func TestARequiredApprovalIsDecidedByAnotherKey(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		child, _ := e.Child(root, map[string]any{"label": "agent"})
		approver, _ := e.Child(root, map[string]any{"label": "approver"})
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17, "USDC": 10_000_000})
		e.Must(setPolicy(e, root, id, 1, "require_approval"), 200)

		for _, c := range []struct {
			decision, final string
			moved           int64
			charged         int64
		}{
			{"approve", "confirmed", 1000, 100_000},
			{"reject", "rejected", 0, 0},
		} {
			credits, usdc := micro(e.Balance(root)), balance(t, e, root, id, "USDC")
			q := e.Must(txQuote(e, child, id, freshAddress(), "USDC", "1000"), 201)
			if d := q.Body["policy"].(map[string]any)["decision"]; d != "require_approval" {
				t.Fatalf("quote's decision %v", d)
			}
			tx := e.Must(send(e, child, id, q.Str("id")), 202)
			approval := tx.Str("approvalId")
			if tx.Str("status") != "pending_approval" || approval == "" || tx.Body["hash"] != nil {
				t.Fatalf("%s", tx.Raw)
			}
			e.Must(decide(e, child, approval, c.decision), 403, "self_approval_denied")
			// Undecided, it stays where it is.
			time.Sleep(100 * time.Millisecond)
			if s := e.Must(get(e, child, "/wallets/"+id+"/transactions/"+tx.Str("id"), nil), 200).Str("status"); s != "pending_approval" {
				t.Fatalf("undecided transaction is %s", s)
			}
			e.Must(decide(e, approver, approval, c.decision), 200)
			done := waitTx(t, e, child, id, tx.Str("id"))
			if done.Str("status") != c.final || micro(done.Body["chargedCredits"].(float64)) != c.charged {
				t.Fatalf("%s: %s", c.decision, done.Raw)
			}
			if c.final == "rejected" && (done.Body["hash"] != nil || done.Body["nonce"] != nil) {
				t.Fatalf("a rejected send was signed: %s", done.Raw)
			}
			if got := balance(t, e, root, id, "USDC"); new(big.Int).Sub(usdc, got).Int64() != c.moved {
				t.Fatalf("%s: USDC %s → %s", c.decision, usdc, got)
			}
			if got := micro(e.Balance(root)); credits-got != c.charged {
				t.Fatalf("%s: credits %d → %d", c.decision, credits, got)
			}
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
