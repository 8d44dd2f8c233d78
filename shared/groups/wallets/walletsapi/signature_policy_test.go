package walletsapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

const max256 = "115792089237316195423570985008687907853269984665640564039457584007913129639935"

// permit is an EIP-2612 permit of value base units of token to spender.
func permit(name, token, spender, value string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],
"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]},
"primaryType":"Permit","domain":{"name":%q,"version":"2","chainId":1337,"verifyingContract":%q},
"message":{"owner":"0x1111111111111111111111111111111111111111","spender":%q,"value":%q,"nonce":0,"deadline":"99999999999"}}`, name, token, spender, value))
}

func sigQuote(e *apitest.Env, key, walletID string, typedData json.RawMessage) *apitest.Resp {
	return post(e, key, "/wallets/"+walletID+"/signatures/quote", map[string]any{"type": "eip712", "typedData": typedData}, nil)
}

// With a deny on USDC sends over 10 USDC and eip712 signatures allowed, a
// permit of 2^256-1 on the USDC contract must not be signed. A permit is decided as a send of its token: over the cap it is refused;
// under it, it is signed and its amount counts in the rolling total the
// next send is measured against. Typed data that moves nothing is left to
// the signature rules; the domain criteria refuse by domain name.
func TestAPermitIsDecidedAsASendOfItsToken(t *testing.T) {
	dev := chaintest.Shared(t)
	usdcAsset, _ := dev.Network().Asset("USDC")
	usdc := usdcAsset.Address.Hex()
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, _ := newWallet(t, e, root, nil)
		spender := freshAddress().Hex()
		e.Must(setPolicy(e, root, id, 1, "allow",
			map[string]any{"action": "deny", "operation": "transactions.create", "criteria": []map[string]any{{"type": "value", "asset": "USDC", "op": "gt", "amount": "10000000"}}},
			map[string]any{"action": "deny", "operation": "transactions.create", "criteria": []map[string]any{{"type": "rollingTotal", "asset": "USDC", "windowSeconds": 3600, "max": "10000000"}}},
			map[string]any{"action": "allow", "operation": "signatures.create", "criteria": []map[string]any{{"type": "signatureType", "op": "in", "signatureTypes": []string{"eip712"}}}},
			map[string]any{"action": "deny", "operation": "signatures.create", "criteria": []map[string]any{{"type": "domainName", "op": "in", "names": []string{"Drainer"}},
				{"type": "chainId", "op": "in", "chainIds": []int{1337}}}},
		), 200)

		refused := e.Must(sigQuote(e, root, id, permit("USD Coin", usdc, spender, max256)), 403, "policy_denied")
		if !strings.Contains(string(refused.Raw), "as a send of "+max256+" USDC") {
			t.Fatalf("refusal %s does not say it was decided as a send", refused.Raw)
		}
		e.Must(sigQuote(e, root, id, permit("Drainer", usdc, spender, "1")), 403, "policy_denied")

		q := e.Must(sigQuote(e, root, id, permit("USD Coin", usdc, spender, "6000000")), 201)
		tr := q.Body["transfers"].([]any)
		if q.Body["policy"].(map[string]any)["decision"] != "allow" || len(tr) != 1 || str(tr[0], "kind") != "permit" || str(tr[0], "asset") != "USDC" ||
			str(tr[0], "amount") != "6000000" || str(tr[0], "recipient") != spender || str(tr[0], "token") != usdc {
			t.Fatalf("quote %s", q.Raw)
		}
		e.Must(post(e, root, "/wallets/"+id+"/signatures", map[string]any{"quoteId": q.Str("id")}, nil), 201)

		// 6 USDC permitted; a 6 USDC send would take the hour to 12.
		send := e.Must(txQuote(e, root, id, freshAddress(), "USDC", "6000000"), 201)
		if p := send.Body["policy"].(map[string]any); p["decision"] != "deny" || !strings.Contains(p["reason"].(string), "would be 12000000") {
			t.Fatalf("a send after a signed permit: %s", send.Raw)
		}
		e.Must(sigQuote(e, root, id, permit("USD Coin", usdc, spender, "5000000")), 403, "policy_denied")

		mail := e.Must(sigQuote(e, root, id, json.RawMessage(mail)), 201)
		if mail.Body["policy"].(map[string]any)["decision"] != "allow" || len(mail.Body["transfers"].([]any)) != 0 {
			t.Fatalf("typed data that moves nothing: %s", mail.Raw)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// pendingApproval reads an approval from the account's pending list.
func pendingApproval(t *testing.T, e *apitest.Env, key, id string) map[string]any {
	t.Helper()
	for _, a := range e.Must(get(e, key, "/approvals?status=pending&limit=100", nil), 200).Body["data"].([]any) {
		if str(a, "id") == id {
			return a.(map[string]any)
		}
	}
	t.Fatalf("approval %s is not pending", id)
	return nil
}

// An approval of a signature must show more than the digest, and the
// requester must not approve it with a child key it minted for that. The
// approval shows what is signed (the typed data's domain,
// primaryType, types and message, with the transfers the policy counted;
// a personal_sign's message) whole, and refuses what could not be shown
// whole; a key the requester minted
// is refused, and so is its parent; a key beside it decides.
func TestAnApprovalShowsWhatIsSignedAndOnlyAKeyOutsideTheRequesterDecides(t *testing.T) {
	dev := chaintest.Shared(t)
	usdcAsset, _ := dev.Network().Asset("USDC")
	usdc := usdcAsset.Address.Hex()
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		agent, _ := e.Child(root, map[string]any{"label": "agent"})
		approver, _ := e.Child(root, map[string]any{"label": "approver"})
		minted, _ := e.Child(agent, map[string]any{"label": "rubber stamp", "scopes": []string{"approvals:write"}, "allowedOperations": []string{"approvals.decide"}})
		id, addr := newWallet(t, e, root, nil)
		spender := freshAddress().Hex()

		q := e.Must(sigQuote(e, agent, id, permit("USD Coin", usdc, spender, max256)), 201)
		in := pendingApproval(t, e, root, q.Str("approvalId"))["input"].(map[string]any)
		td, _ := in["typedData"].(map[string]any)
		msg, _ := td["message"].(map[string]any)
		if td["primaryType"] != "Permit" || td["types"] == nil || td["domain"].(map[string]any)["verifyingContract"] != usdc ||
			msg["value"] != max256 || msg["spender"] != spender || str(in["transfers"].([]any)[0], "amount") != max256 || in["digest"] != q.Str("digest") {
			t.Fatalf("the approval does not show the permit: %v", in)
		}
		e.Must(decide(e, minted, q.Str("approvalId"), "approve"), 403, "self_approval_denied")
		e.Must(decide(e, agent, q.Str("approvalId"), "approve"), 403, "self_approval_denied")
		e.Must(decide(e, root, q.Str("approvalId"), "approve"), 403, "self_approval_denied")
		e.Must(decide(e, approver, q.Str("approvalId"), "approve"), 200)
		recovers(t, e.Must(post(e, agent, "/wallets/"+id+"/signatures", map[string]any{"quoteId": q.Str("id")}, nil), 201), q.Str("digest"), addr)

		p := e.Must(post(e, agent, "/wallets/"+id+"/signatures/quote", map[string]any{"type": "personal_sign", "message": "Pay invoice 42"}, nil), 201)
		if in := pendingApproval(t, e, root, p.Str("approvalId"))["input"].(map[string]any); in["message"] != "Pay invoice 42" || in["encoding"] != "utf8" {
			t.Fatalf("the approval does not show the message: %v", in)
		}

		// What an approver could not read whole is refused, never shown in
		// part: a document or message past the bound, and types that the
		// primary type does not reach (they leave the digest unchanged and
		// only pad what the approver reads).
		padding := `"Pad":[` + strings.Repeat(`{"name":"p","type":"string"},`, 700) + `{"name":"p","type":"string"}],"Mail":`
		for _, c := range []struct {
			name, location string
			body           json.RawMessage
		}{
			{"a large message", "body.typedData", json.RawMessage(strings.Replace(mail, `"Hello, Bob!"`, `"`+strings.Repeat("x", 20_000)+`"`, 1))},
			{"a type nothing reaches", "body.typedData.types", json.RawMessage(strings.Replace(mail, `"Mail":`, padding, 1))},
			{"a small unused type", "body.typedData.types", json.RawMessage(strings.Replace(mail, `"Mail":`, `"Unused":[{"name":"x","type":"uint256"}],"Mail":`, 1))},
		} {
			r := e.Must(sigQuote(e, agent, id, c.body), 400, "validation_failed")
			if loc := str(r.Body["errors"].([]any)[0], "location"); loc != c.location {
				t.Errorf("%s: refused at %q; want %q (%s)", c.name, loc, c.location, r.Raw)
			}
		}
		e.Must(post(e, agent, "/wallets/"+id+"/signatures/quote", map[string]any{"type": "personal_sign", "message": strings.Repeat("y", 20_000)}, nil), 400, "validation_failed")
		approvals := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/approvals?status=pending&limit=100", Key: root}), 200)
		if n := len(approvals.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d approvals pending; a refused request must create none", n)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
