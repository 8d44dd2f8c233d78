package walletsapi_test

import (
	"encoding/json"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/harness/apitest"
	"platformapi/shared/harness/apitest/chaintest"
)

// mail is EIP-712's own example; its digest is the EIP's.
const mail = `{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},
{"name":"verifyingContract","type":"address"}],"Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],
"Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]},"primaryType":"Mail",
"domain":{"name":"Ether Mail","version":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
"message":{"from":{"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},"to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}}`

const mailDigest = "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2"

// recovers checks a signature response: v is 27/28, it is over the
// expected digest, and ecrecover gives the wallet's address.
func recovers(t *testing.T, r *apitest.Resp, digest string, wallet common.Address) {
	t.Helper()
	sig, err := hexutil.Decode(r.Str("signature"))
	if err != nil || len(sig) != 65 || sig[64] != 27 && sig[64] != 28 {
		t.Fatalf("signature %s (%v)", r.Raw, err)
	}
	if r.Str("digest") != digest || common.HexToAddress(r.Str("address")) != wallet {
		t.Fatalf("signed %s, want digest %s by %s", r.Raw, digest, wallet)
	}
	norm := append([]byte{}, sig...)
	norm[64] -= 27
	pub, err := crypto.SigToPub(common.HexToHash(digest).Bytes(), norm)
	if err != nil || crypto.PubkeyToAddress(*pub) != wallet {
		t.Fatalf("the signature recovers to %v (%v), not %s", pub, err, wallet)
	}
}

// By default a signature needs approval: its quote requests one; signing
// before a key outside the requester's lineage approved is 403
// approval_required; once approved it is signed, recovers to the wallet,
// and the quote is used up.
func TestASignatureNeedsAnotherKeysApprovalAndRecoversToTheWallet(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		agent, _ := e.Child(root, map[string]any{"label": "agent"})
		approver, _ := e.Child(root, map[string]any{"label": "approver"})
		id, addr := newWallet(t, e, root, nil)
		for _, c := range []struct {
			name   string
			body   map[string]any
			digest string
		}{
			{"personal_sign", map[string]any{"type": "personal_sign", "message": "I approve invoice 42"},
				hexutil.Encode(accounts.TextHash([]byte("I approve invoice 42")))},
			{"personal_sign hex", map[string]any{"type": "personal_sign", "message": "0x00ff10", "encoding": "hex"},
				hexutil.Encode(accounts.TextHash([]byte{0, 0xff, 0x10}))},
			{"eip712", map[string]any{"type": "eip712", "typedData": json.RawMessage(mail)}, mailDigest},
		} {
			q := e.Must(post(e, agent, "/wallets/"+id+"/signatures/quote", c.body, nil), 201)
			approval := q.Str("approvalId")
			if q.Str("digest") != c.digest || approval == "" || q.Body["policy"].(map[string]any)["decision"] != "require_approval" {
				t.Fatalf("%s: quote %s, want digest %s", c.name, q.Raw, c.digest)
			}
			sign := map[string]any{"quoteId": q.Str("id")}
			e.Must(post(e, agent, "/wallets/"+id+"/signatures", sign, nil), 403, "approval_required")
			e.Must(decide(e, agent, approval, "approve"), 403, "self_approval_denied")
			e.Must(decide(e, approver, approval, "approve"), 200)
			recovers(t, e.Must(post(e, agent, "/wallets/"+id+"/signatures", sign, nil), 201), c.digest, addr)
			e.Must(post(e, agent, "/wallets/"+id+"/signatures", sign, nil), 409, "quote_already_used")
		}
		// A rejected approval signs nothing.
		q := e.Must(post(e, agent, "/wallets/"+id+"/signatures/quote", map[string]any{"type": "personal_sign", "message": "no"}, nil), 201)
		e.Must(decide(e, approver, q.Str("approvalId"), "reject"), 200)
		e.Must(post(e, agent, "/wallets/"+id+"/signatures", map[string]any{"quoteId": q.Str("id")}, nil), 403, "approval_required")
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}

// A policy rule allowing signatures makes them immediate: no approval,
// signed at once, the quote still used once and the retry of the same call
// answered with the same signature.
func TestAnAllowRuleMakesSignaturesImmediate(t *testing.T) {
	dev := chaintest.Shared(t)
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(10, nil)
		id, addr := newWallet(t, e, root, nil)
		e.Must(setPolicy(e, root, id, 1, "require_approval", map[string]any{"action": "allow", "operation": "signatures.create",
			"criteria": []map[string]any{{"type": "signatureType", "op": "in", "signatureTypes": []string{"eip712"}}}}), 200)
		q := e.Must(post(e, root, "/wallets/"+id+"/signatures/quote", map[string]any{"type": "eip712", "typedData": json.RawMessage(mail)}, nil), 201)
		if q.Body["approvalId"] != nil || q.Body["policy"].(map[string]any)["decision"] != "allow" {
			t.Fatalf("quote %s", q.Raw)
		}
		call := apitest.Req{Method: "POST", Path: "/v1/wallets/" + id + "/signatures", Key: root, Idem: apitest.Idem(), Body: map[string]any{"quoteId": q.Str("id")}}
		first := e.Must(e.Do(call), 201)
		recovers(t, first, mailDigest, addr)
		if again := e.Must(e.Do(call), 201); again.Str("id") != first.Str("id") || again.Str("signature") != first.Str("signature") {
			t.Fatalf("retry %s, first %s", again.Raw, first.Raw)
		}
		e.Must(post(e, root, "/wallets/"+id+"/signatures", map[string]any{"quoteId": q.Str("id")}, nil), 409, "quote_already_used")
		// personal_sign is not covered by the rule: the default still asks.
		p := e.Must(post(e, root, "/wallets/"+id+"/signatures/quote", map[string]any{"type": "personal_sign", "message": "x"}, nil), 201)
		if p.Str("approvalId") == "" {
			t.Fatalf("quote %s", p.Raw)
		}
	}, apitest.Options{Parts: []apitest.Part{chaintest.On(dev)}})
}
