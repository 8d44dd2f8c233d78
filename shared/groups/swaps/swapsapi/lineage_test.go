package swapsapi_test

import (
	"testing"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// Nobody approves their own request: a swap waiting for approval is
// refused (403 self_approval_denied) to every key of its requester's
// lineage (the key, its rolled predecessors and successors, its ancestors
// and theirs, its descendants); it stays pending_approval and the wallet
// keeps its USDC; a key outside the lineage approves it and it runs.
func TestNobodyApprovesTheirOwnSwap(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		k := e.Lineage(10)
		id, _ := fundedWallet(t, e, dev, k["root"], usdc(100))
		e.Must(patchPolicy(e, k["root"], id, 1, "allow", map[string]any{"action": "require_approval", "operation": "swaps.execute", "criteria": []any{}}), 200)
		for _, c := range apitest.LineageCases {
			before := balances(t, e, k["root"], id)["USDC"]
			sw := e.Must(post(e, k[c.Requester], "/swaps", map[string]any{"quoteId": quote(t, e, k[c.Requester], id, usdc(20), 100).Str("id")}), 202)
			approval := sw.Str("approvalId")
			for _, d := range c.Refused {
				if r := post(e, k[d], "/approvals/"+approval, map[string]any{"decision": "approve"}); r.Status != 403 || r.Code() != "self_approval_denied" {
					t.Errorf("the %s's swap approved by the %s: %d %s", c.Requester, d, r.Status, r.Raw)
				}
			}
			if r := e.Must(get(e, k["root"], "/swaps/"+sw.Str("id")), 200); r.Str("status") != "pending_approval" {
				t.Fatalf("the %s's swap after its lineage tried to approve it: %s", c.Requester, r.Raw)
			}
			if a := e.Must(get(e, k["root"], "/approvals?status=pending&limit=100"), 200); !containsID(a.Body["data"].([]any), approval) {
				t.Fatalf("the %s's swap approval is no longer pending: %s", c.Requester, a.Raw)
			}
			if got := balances(t, e, k["root"], id)["USDC"]; got.Cmp(before) != 0 {
				t.Fatalf("the %s's unapproved swap moved USDC: %s → %s", c.Requester, before, got)
			}
			if c.Allowed == "" {
				continue
			}
			e.Must(post(e, k[c.Allowed], "/approvals/"+approval, map[string]any{"decision": "approve"}), 200)
			if done := waitSwap(t, e, k["root"], sw.Str("id")); done.Str("status") != "done" {
				t.Fatalf("the %s's swap approved by the %s: %s", c.Requester, c.Allowed, done.Raw)
			}
			if got := balances(t, e, k["root"], id)["USDC"]; before.Sub(before, got).Cmp(usdc(20)) != 0 {
				t.Fatalf("the %s's approved swap moved %s USDC units", c.Requester, before)
			}
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

func containsID(list []any, id string) bool {
	for _, it := range list {
		if m, _ := it.(map[string]any); m["id"] == id {
			return true
		}
	}
	return false
}
