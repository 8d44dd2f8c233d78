package policy

import (
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// FuzzPolicy: a policy document comes from callers. Normalizing it never
// panics; one it accepts is accepted again as it was stored, and deciding
// any intent with it, a signature authorising transfers included, never
// panics and gives one of the three actions.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte(`{"revision":1,"defaultAction":"allow","rules":[{"action":"deny","operation":"transactions.create","criteria":[{"type":"rollingTotal","asset":"USDC","windowSeconds":3600,"max":"10"}]}]}`))
	f.Add([]byte(`{"revision":2,"defaultAction":"require_approval","rules":[{"action":"allow","operation":"signatures.create","criteria":[{"type":"signatureType","op":"in","signatureTypes":["eip712"]}]}]}`))
	f.Add([]byte(`{"revision":1,"defaultAction":"deny","rules":[{"action":"allow","operation":"transactions.create","criteria":[{"type":"recipient","op":"not_in","addresses":["0x000000000000000000000000000000000000dead"]},{"type":"value","asset":"ETH","op":"lte","amount":"1000"}]}]}`))
	f.Add([]byte(`{"revision":1,"defaultAction":"allow","rules":[{"action":"deny","operation":"signatures.create","criteria":[{"type":"verifyingContract","op":"not_in","addresses":["0x000000000022D473030F116dDEE9F6B43aC78BA3"]},{"type":"domainName","op":"in","names":["Permit2"]},{"type":"chainId","op":"in","chainIds":[1,1337]},{"type":"value","asset":"USDC","op":"gt","amount":"10"}]}]}`))
	now := time.Unix(1_800_000_000, 0)
	history := []Spend{{Asset: "USDC", Amount: big.NewInt(7), At: now.Add(-time.Minute)}}
	intents := []Intent{
		{Operation: OpTransactionsCreate, ChainID: 1, To: common.Address{1}, Recipient: common.HexToAddress("0x000000000000000000000000000000000000dead"), Asset: "USDC", Amount: big.NewInt(5)},
		{Operation: OpSignaturesCreate, SignatureType: SignatureEIP712},
		{Operation: OpSwapsExecute, ChainID: 1, To: common.Address{2}, Asset: "ETH", Amount: big.NewInt(1)},
	}
	vc := common.HexToAddress("0x000000000022D473030F116dDEE9F6B43aC78BA3")
	signature := Intent{Operation: OpSignaturesCreate, SignatureType: SignatureEIP712, ChainID: 1, Domain: &Domain{Name: "Permit2", VerifyingContract: &vc}}
	transfers := []Transfer{{Token: common.Address{3}, Recipient: common.Address{4}, Asset: "USDC", Amount: big.NewInt(11)}, {Token: common.Address{5}, Amount: big.NewInt(1)}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p Policy
		if json.Unmarshal(raw, &p) != nil {
			return
		}
		n, err := Normalize(p)
		if err != nil {
			return
		}
		if _, err := Normalize(n); err != nil {
			t.Fatalf("a stored policy is refused: %v", err)
		}
		decisions := []Decision{EvaluateSignature(n, signature, transfers, history, now)}
		for _, in := range intents {
			decisions = append(decisions, Evaluate(n, in, history, now))
		}
		for _, d := range decisions {
			switch d.Action {
			case ActionAllow, ActionDeny, ActionRequireApproval:
			default:
				t.Fatalf("decision %q", d.Action)
			}
		}
	})
}
