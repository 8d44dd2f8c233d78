package walletsapi_test

import (
	"math/big"
	"sort"
	"strconv"
	"sync"
	"testing"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// A deny rule on a rolling total is a spend cap exact under concurrency:
// 32 quoted sends executed at once against a cap of 10 of them get exactly
// 10 through (and 22 policy_denied); the wallet pays exactly 10 amounts,
// with ten distinct, consecutive nonces.
func TestARollingTotalCapIsExactUnderConcurrentSends(t *testing.T) {
	const amount, sends, fits = 250_000, 32, 10
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(100, nil)
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e18, "USDC": sends * amount})
		e.Must(setPolicy(e, root, id, 1, "allow", map[string]any{"action": "deny", "operation": "transactions.create",
			"criteria": []map[string]any{{"type": "rollingTotal", "asset": "USDC", "windowSeconds": 3600, "max": strconv.Itoa(fits * amount)}}}), 200)
		before := balance(t, e, root, id, "USDC")
		quotes := make([]string, sends)
		for i := range quotes {
			quotes[i] = e.Must(txQuote(e, root, id, freshAddress(), "USDC", strconv.Itoa(amount)), 201).Str("id")
		}
		answers := make([]*apitest.Resp, sends)
		var wg sync.WaitGroup
		for i, q := range quotes {
			wg.Add(1)
			go func() { defer wg.Done(); answers[i] = send(e, root, id, q) }()
		}
		wg.Wait()
		var accepted []string
		denied := 0
		for _, r := range answers {
			switch {
			case r.Status == 202:
				accepted = append(accepted, r.Str("id"))
			case r.Status == 403 && r.Code() == "policy_denied":
				denied++
			default:
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		}
		if len(accepted) != fits || denied != sends-fits {
			t.Fatalf("%d accepted, %d denied", len(accepted), denied)
		}
		var nonces []int
		for _, tx := range accepted {
			done := waitTx(t, e, root, id, tx)
			if done.Str("status") != "confirmed" {
				t.Fatalf("%s", done.Raw)
			}
			nonces = append(nonces, int(done.Body["nonce"].(float64)))
		}
		sort.Ints(nonces)
		for i, n := range nonces {
			if n != i {
				t.Fatalf("nonces %v", nonces)
			}
		}
		if got := balance(t, e, root, id, "USDC"); new(big.Int).Sub(before, got).Cmp(big.NewInt(fits*amount)) != 0 {
			t.Fatalf("USDC %s → %s", before, got)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
