package swapsapi_test

import (
	"testing"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

func patchPolicy(e *apitest.Env, key, walletID string, rev int, defaultAction string, rules ...map[string]any) *apitest.Resp {
	if rules == nil {
		rules = []map[string]any{}
	}
	return e.Do(apitest.Req{Method: "PATCH", Path: "/v1/wallets/" + walletID + "/policy", Key: key, Idem: apitest.Idem(),
		Body: map[string]any{"expectedRevision": rev, "defaultAction": defaultAction, "rules": rules}})
}

// The wallet's policy decides swaps.execute: a deny refuses the swap and
// creates nothing; require_approval makes it wait for an approval that a
// key outside the requester's lineage decides (its parent is refused), then
// it runs by itself.
func TestAWalletsPolicyDecidesItsSwaps(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		child, _ := e.Child(root, map[string]any{"label": "agent"})
		approver, _ := e.Child(root, map[string]any{"label": "approver"})
		id, _ := fundedWallet(t, e, dev, root, usdc(100))

		e.Must(patchPolicy(e, root, id, 1, "allow", map[string]any{"action": "deny", "operation": "swaps.execute",
			"criteria": []map[string]any{{"type": "value", "asset": "USDC", "op": "gt", "amount": usdc(50).String()}}}), 200)
		denied := post(e, child, "/swaps", map[string]any{"quoteId": quote(t, e, child, id, usdc(60), 50).Str("id")})
		if denied.Status != 403 || denied.Str("code") != "policy_denied" {
			t.Fatalf("a denied swap: %d %s", denied.Status, denied.Raw)
		}
		if list := e.Must(get(e, child, "/swaps"), 200); len(list.Body["data"].([]any)) != 0 {
			t.Fatalf("a denied swap created something: %s", list.Raw)
		}

		e.Must(patchPolicy(e, root, id, 2, "allow", map[string]any{"action": "require_approval", "operation": "swaps.execute", "criteria": []any{}}), 200)
		before := balances(t, e, root, id)
		sw := e.Must(post(e, child, "/swaps", map[string]any{"quoteId": quote(t, e, child, id, usdc(40), 100).Str("id")}), 202)
		approval := sw.Str("approvalId")
		if sw.Str("status") != "pending_approval" || approval == "" {
			t.Fatalf("swap %s", sw.Raw)
		}
		e.Must(post(e, child, "/approvals/"+approval, map[string]any{"decision": "approve"}), 403, "self_approval_denied")
		e.Must(post(e, root, "/approvals/"+approval, map[string]any{"decision": "approve"}), 403, "self_approval_denied")
		e.Must(post(e, approver, "/approvals/"+approval, map[string]any{"decision": "approve"}), 200)
		done := waitSwap(t, e, child, sw.Str("id"))
		if done.Str("status") != "done" {
			t.Fatalf("approved swap %s", done.Raw)
		}
		after := balances(t, e, root, id)
		if d := before["USDC"].Sub(before["USDC"], after["USDC"]); d.Cmp(usdc(40)) != 0 {
			t.Fatalf("USDC moved by %s", d)
		}

		other, _ := e.RootKey(10, nil)
		if r := get(e, other, "/swaps/"+sw.Str("id")); r.Status != 404 {
			t.Fatalf("another account's swap: %d", r.Status)
		}
		r := post(e, other, "/swaps/quote", map[string]any{"walletId": id, "fromChainId": 1337, "toChainId": 1337,
			"fromToken": "USDC", "toToken": "WETH", "fromAmount": "1"})
		if r.Status != 404 {
			t.Fatalf("a quote for another account's wallet: %d %s", r.Status, r.Raw)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

func TestASwapQuoteExpiresWithin30Seconds(t *testing.T) {
	dev := chaintest.Shared(t)
	e := apitest.New(t, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
	root, _ := e.RootKey(10, nil)
	id, _ := fundedWallet(t, e, dev, root, usdc(10))
	q := quote(t, e, root, id, usdc(1), 50)
	e.Clock.Advance(31_000_000_000)
	e.Must(post(e, root, "/swaps", map[string]any{"quoteId": q.Str("id")}), 409, "quote_expired")
}
