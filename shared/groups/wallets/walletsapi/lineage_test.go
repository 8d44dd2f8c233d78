package walletsapi_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// Nobody approves their own request: a wallet signature asked for by a key
// is refused (403 self_approval_denied) to every key of its lineage (the
// key, a key it was rolled from or into, an ancestor or a rolled ancestor,
// a descendant, a child of its successor), the approval stays pending and
// nothing is signed; a key outside the lineage (a sibling, a cousin)
// approves it and it is signed. The root's own request has no key outside.
func TestNobodyApprovesTheirOwnWalletSignature(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		k := e.Lineage(10)
		id, addr := newWallet(t, e, k["root"], nil)
		for _, c := range apitest.LineageCases {
			msg := "pay invoice of " + c.Requester
			q := e.Must(post(e, k[c.Requester], "/wallets/"+id+"/signatures/quote", map[string]any{"type": "personal_sign", "message": msg}, nil), 201)
			approval, sign := q.Str("approvalId"), map[string]any{"quoteId": q.Str("id")}
			for _, d := range c.Refused {
				if r := decide(e, k[d], approval, "approve"); r.Status != 403 || r.Code() != "self_approval_denied" {
					t.Errorf("the %s's signature approved by the %s: %d %s", c.Requester, d, r.Status, r.Raw)
				}
			}
			pendingApproval(t, e, k["root"], approval)
			e.Must(post(e, k[c.Requester], "/wallets/"+id+"/signatures", sign, nil), 403, "approval_required")
			if c.Allowed == "" {
				continue
			}
			e.Must(decide(e, k[c.Allowed], approval, "approve"), 200)
			recovers(t, e.Must(post(e, k[c.Requester], "/wallets/"+id+"/signatures", sign, nil), 201), hexutil.Encode(accounts.TextHash([]byte(msg))), addr)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// Nobody approves their own request: a 50 USDC send under require_approval
// is refused to every key of the requester's lineage; it stays
// pending_approval, unsigned, and the wallet keeps its USDC; a key outside
// the lineage approves it and it is sent.
func TestNobodyApprovesTheirOwnWalletSend(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		k := e.Lineage(10)
		id, addr := newWallet(t, e, k["root"], nil)
		fund(t, dev, addr, map[string]int64{"ETH": 1e17, "USDC": 200_000_000})
		e.Must(setPolicy(e, k["root"], id, 1, "require_approval"), 200)
		fifty := big.NewInt(50_000_000)
		for _, c := range apitest.LineageCases {
			usdc := balance(t, e, k["root"], id, "USDC")
			q := e.Must(txQuote(e, k[c.Requester], id, freshAddress(), "USDC", fifty.String()), 201)
			tx := e.Must(send(e, k[c.Requester], id, q.Str("id")), 202)
			approval, path := tx.Str("approvalId"), "/wallets/"+id+"/transactions/"+tx.Str("id")
			for _, d := range c.Refused {
				if r := decide(e, k[d], approval, "approve"); r.Status != 403 || r.Code() != "self_approval_denied" {
					t.Errorf("the %s's send approved by the %s: %d %s", c.Requester, d, r.Status, r.Raw)
				}
			}
			pendingApproval(t, e, k["root"], approval)
			if r := e.Must(get(e, k["root"], path, nil), 200); r.Str("status") != "pending_approval" || r.Body["hash"] != nil {
				t.Fatalf("the %s's send after its lineage tried to approve it: %s", c.Requester, r.Raw)
			}
			if got := balance(t, e, k["root"], id, "USDC"); got.Cmp(usdc) != 0 {
				t.Fatalf("the %s's unapproved send moved USDC: %s → %s", c.Requester, usdc, got)
			}
			if c.Allowed == "" {
				continue
			}
			e.Must(decide(e, k[c.Allowed], approval, "approve"), 200)
			if done := waitTx(t, e, k["root"], id, tx.Str("id")); done.Str("status") != "confirmed" {
				t.Fatalf("the %s's send approved by the %s: %s", c.Requester, c.Allowed, done.Raw)
			}
			if got := balance(t, e, k["root"], id, "USDC"); new(big.Int).Sub(usdc, got).Cmp(fifty) != 0 {
				t.Fatalf("the %s's approved send: USDC %s → %s", c.Requester, usdc, got)
			}
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
