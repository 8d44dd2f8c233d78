package walletsapi_test

import (
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

func recipientRule(action string, op string, addrs ...common.Address) map[string]any {
	var hexes []string
	for _, a := range addrs {
		hexes = append(hexes, a.Hex())
	}
	return map[string]any{"action": action, "operation": "transactions.create",
		"criteria": []map[string]any{{"type": "recipient", "op": op, "addresses": hexes}}}
}

// A send a deny rule applies to is 403 policy_denied and leaves nothing
// behind: no transaction, no balance moved, no credits held; deny wins
// over an allow rule that also applies, and over require_approval.
func TestADenyRuleRefusesAndCreatesNothingAndWinsOverAllow(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, addr := newWallet(t, e, root, nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17, "USDC": 10_000_000})
		blocked, other := freshAddress(), freshAddress()
		e.Must(setPolicy(e, root, id, 1, "allow",
			recipientRule("allow", "in", blocked, other),
			recipientRule("require_approval", "in", blocked),
			recipientRule("deny", "in", blocked)), 200)
		credits, usdc, eth := micro(e.Balance(root)), balance(t, e, root, id, "USDC"), balance(t, e, root, id, "ETH")
		for _, asset := range []string{"USDC", "ETH"} {
			q := e.Must(txQuote(e, root, id, blocked, asset, "1000"), 201)
			if d := q.Body["policy"].(map[string]any)["decision"]; d != "deny" {
				t.Fatalf("%s quote's decision %v", asset, d)
			}
			e.Must(send(e, root, id, q.Str("id")), 403, "policy_denied")
		}
		if n := txCount(t, e, root, id); n != 0 {
			t.Fatalf("%d transactions after denials", n)
		}
		if micro(e.Balance(root)) != credits || balance(t, e, root, id, "USDC").Cmp(usdc) != 0 || balance(t, e, root, id, "ETH").Cmp(eth) != 0 {
			t.Fatal("a denied send moved credits or funds")
		}
		// The allow rule alone lets the other recipient through.
		q := e.Must(txQuote(e, root, id, other, "USDC", "1000"), 201)
		if done := waitTx(t, e, root, id, e.Must(send(e, root, id, q.Str("id")), 202).Str("id")); done.Str("status") != "confirmed" {
			t.Fatalf("allowed send %s", done.Raw)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// A policy is replaced only over the revision read (409
// policy_revision_conflict otherwise), only by a key with approvals:write
// (403 scope_denied otherwise), and an invalid one is 400 naming where.
func TestPolicyUpdatesNeedTheCurrentRevisionTheScopeAndAValidPolicy(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		spender, _ := e.Child(root, map[string]any{"scopes": []string{"wallets:read", "wallets:create", "wallets:transact", "wallets:sign"}})
		id, _ := newWallet(t, e, root, nil)
		w := e.Must(setPolicy(e, root, id, 1, "deny"), 200)
		if p := w.Body["policy"].(map[string]any); p["revision"] != 2.0 || p["defaultAction"] != "deny" {
			t.Fatalf("policy %s", w.Raw)
		}
		cases := []struct {
			name     string
			key      string
			rev      int64
			rules    []map[string]any
			status   int
			code     string
			location string
		}{
			{"a stale revision", root, 1, nil, 409, "policy_revision_conflict", ""},
			{"a key without approvals:write", spender, 2, nil, 403, "scope_denied", ""},
			{"a window below a minute", root, 2, []map[string]any{{"action": "deny", "operation": "transactions.create",
				"criteria": []map[string]any{{"type": "rollingTotal", "asset": "USDC", "windowSeconds": 10, "max": "1"}}}}, 400, "", "body.rules[0].criteria[0].windowSeconds"},
			{"a criterion of another operation", root, 2, []map[string]any{{"action": "allow", "operation": "transactions.create",
				"criteria": []map[string]any{{"type": "verifyingContract", "op": "in", "addresses": []string{freshAddress().Hex()}}}}}, 400, "", "body.rules[0].criteria[0]"},
		}
		for _, c := range cases {
			r := setPolicy(e, c.key, id, c.rev, "allow", c.rules...)
			if r.Status != c.status || c.code != "" && r.Code() != c.code {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Raw)
				continue
			}
			if c.location != "" {
				found := false
				for _, fe := range r.Body["errors"].([]any) {
					if loc := str(fe, "location"); len(loc) >= len(c.location) && loc[:len(c.location)] == c.location {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: no error at %s: %s", c.name, c.location, r.Raw)
				}
			}
		}
		if p := e.Must(get(e, root, "/wallets/"+id, nil), 200).Body["policy"].(map[string]any); p["revision"] != 2.0 || p["defaultAction"] != "deny" {
			t.Fatalf("a refused update changed the policy: %v", p)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// Replacements racing from the same revision: exactly one wins, every
// other is 409 policy_revision_conflict, and the policy is the winner's.
func TestConcurrentPolicyReplacementsFromOneRevisionLetExactlyOneWin(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, _ := newWallet(t, e, root, nil)
		const racers = 8
		codes := make(chan int, racers)
		var wg sync.WaitGroup
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := setPolicy(e, root, id, 1, "deny")
				if r.Status == 409 && r.Str("code") != "policy_revision_conflict" {
					t.Errorf("409 %s", r.Raw)
				}
				codes <- r.Status
			}()
		}
		wg.Wait()
		close(codes)
		won := 0
		for c := range codes {
			switch c {
			case 200:
				won++
			case 409:
			default:
				t.Errorf("status %d", c)
			}
		}
		w := e.Must(get(e, root, "/wallets/"+id, nil), 200)
		if p := w.Body["policy"].(map[string]any); won != 1 || p["revision"] != 2.0 || p["defaultAction"] != "deny" {
			t.Fatalf("%d won; policy %v", won, p)
		}
	})
}
