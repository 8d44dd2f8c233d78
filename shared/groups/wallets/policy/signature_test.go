package policy

import (
	"strings"
	"testing"
	"time"
)

func eip712(chainID uint64, name string, verifyingContract *[20]byte) Intent {
	d := &Domain{Name: name}
	if verifyingContract != nil {
		a := usdc
		copy(a[:], verifyingContract[:])
		d.VerifyingContract = &a
	}
	return Intent{Operation: OpSignaturesCreate, SignatureType: SignatureEIP712, ChainID: chainID, Domain: d}
}

// An EIP-2612 permit of 2^256-1 on the USDC contract is not signed under a
// policy that denies USDC transfers over 10 USDC. A transfer a signed
// message authorises is decided as a send of its token too: the caps and rolling totals that stop the send stop the signature,
// the transfers of one message add up, and typed data that moves nothing is
// left to the signature rules.
func TestATransferShapedSignatureIsDecidedAsASendOfItsToken(t *testing.T) {
	capTen := Policy{DefaultAction: ActionAllow, Rules: []Rule{
		rule(ActionDeny, OpTransactionsCreate, value("USDC", OpGT, "10000000")),
		rule(ActionAllow, OpSignaturesCreate, Criterion{Type: CriterionSignatureType, Op: OpIn, SignatureTypes: []string{SignatureEIP712}}),
	}}
	rolling10 := Policy{DefaultAction: ActionAllow, Rules: []Rule{
		rule(ActionDeny, OpTransactionsCreate, rolling("USDC", 3600, "10000000")),
		rule(ActionAllow, OpSignaturesCreate),
	}}
	onlyAlice := Policy{DefaultAction: ActionDeny, Rules: []Rule{
		rule(ActionAllow, OpTransactionsCreate, recipient(OpIn, alice.Hex())),
		rule(ActionAllow, OpSignaturesCreate),
	}}
	sigCap := Policy{DefaultAction: ActionAllow, Rules: []Rule{
		rule(ActionDeny, OpSignaturesCreate, value("USDC", OpGT, "1000000")),
		rule(ActionRequireApproval, OpSignaturesCreate, Criterion{Type: CriterionContract, Op: OpIn, Addresses: []string{usdc.Hex()}}),
	}}
	permit := func(asset, amount string) []Transfer {
		return []Transfer{{Token: usdc, Recipient: bob, Asset: asset, Amount: amt(amount)}}
	}
	recent := []Spend{{Asset: "USDC", Amount: amt("8000000"), At: now.Add(-30 * time.Minute)}}
	for _, c := range []struct {
		name      string
		policy    Policy
		transfers []Transfer
		history   []Spend
		want      string
		reason    string
	}{
		{"unlimited permit over a 10 USDC cap", capTen, permit("USDC", uint256x), nil, ActionDeny, "as a send of " + uint256x + " USDC"},
		{"5 USDC permit under the cap", capTen, permit("USDC", "5000000"), nil, ActionAllow, "signature type eip712"},
		{"typed data that moves nothing", capTen, nil, nil, ActionAllow, "signature type eip712"},
		{"cap of another asset", capTen, permit("WETH", uint256x), nil, ActionAllow, ""},
		{"a token the deployment does not know", capTen, permit("", uint256x), nil, ActionAllow, ""},
		{"permit over what the window has left", rolling10, permit("USDC", "3000000"), recent, ActionDeny, "would be 11000000"},
		{"permit within what the window has left", rolling10, permit("USDC", "2000000"), recent, ActionAllow, ""},
		{"a batch adds up", rolling10, []Transfer{{Token: usdc, Recipient: bob, Asset: "USDC", Amount: amt("6000000")}, {Token: usdc, Recipient: alice, Asset: "USDC", Amount: amt("6000000")}},
			nil, ActionDeny, "would be 12000000"},
		{"spender outside a recipient allowlist", onlyAlice, permit("USDC", "1"), nil, ActionDeny, "default action deny"},
		{"spender on a recipient allowlist", onlyAlice, []Transfer{{Token: usdc, Recipient: alice, Asset: "USDC", Amount: amt("1")}}, nil, ActionAllow, ""},
		{"signature value cap", sigCap, permit("USDC", "2000000"), nil, ActionDeny, "USDC amount 2000000 gt 1000000"},
		{"signature contract rule", sigCap, permit("USDC", "1000000"), nil, ActionRequireApproval, "contract " + usdc.Hex()},
		{"signature rules about transfers skip one that moves nothing", sigCap, nil, nil, ActionAllow, "default action allow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := Validate(c.policy); err != nil {
				t.Fatal(err)
			}
			d := EvaluateSignature(c.policy, eip712(1, "USD Coin", nil), c.transfers, c.history, now)
			if d.Action != c.want || !strings.Contains(d.Reason, c.reason) {
				t.Fatalf("%s (%s), want %s ...%s...", d.Action, d.Reason, c.want, c.reason)
			}
		})
	}
}

// The EIP-712 domain criteria match the domain's verifyingContract, name
// and chainId; a signature without them (a personal_sign, a domain without
// that field) matches neither in nor not_in. chainId also governs sends.
func TestDomainCriteriaMatchOnlyADomainThatHasTheField(t *testing.T) {
	vc := [20]byte(usdc)
	personal := Intent{Operation: OpSignaturesCreate, SignatureType: SignaturePersonal}
	deny := func(c Criterion) Policy {
		return Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpSignaturesCreate, c)}}
	}
	vcIn := deny(Criterion{Type: CriterionVerifyingContract, Op: OpIn, Addresses: []string{strings.ToLower(usdc.Hex())}})
	vcNotIn := deny(Criterion{Type: CriterionVerifyingContract, Op: OpNotIn, Addresses: []string{alice.Hex()}})
	nameIn := deny(Criterion{Type: CriterionDomainName, Op: OpIn, Names: []string{"Permit2"}})
	nameNotIn := deny(Criterion{Type: CriterionDomainName, Op: OpNotIn, Names: []string{"USD Coin"}})
	chainIn := deny(Criterion{Type: CriterionChainID, Op: OpIn, ChainIDs: []uint64{1}})
	chainNotIn := deny(Criterion{Type: CriterionChainID, Op: OpNotIn, ChainIDs: []uint64{1337}})
	sendsOff1 := Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate, Criterion{Type: CriterionChainID, Op: OpNotIn, ChainIDs: []uint64{1}})}}
	runEval(t, []evalCase{
		{"verifying contract listed", vcIn, eip712(1, "USD Coin", &vc), nil, ActionDeny, 0},
		{"verifying contract not listed", vcIn, eip712(1, "USD Coin", nil), nil, ActionAllow, -1},
		{"verifying contract outside a not_in list", vcNotIn, eip712(1, "USD Coin", &vc), nil, ActionDeny, 0},
		{"no verifying contract, not_in", vcNotIn, eip712(1, "USD Coin", nil), nil, ActionAllow, -1},
		{"personal_sign, not_in", vcNotIn, personal, nil, ActionAllow, -1},
		{"name listed", nameIn, eip712(1, "Permit2", nil), nil, ActionDeny, 0},
		{"name compared exactly", nameIn, eip712(1, "permit2", nil), nil, ActionAllow, -1},
		{"name outside a not_in list", nameNotIn, eip712(1, "Permit2", nil), nil, ActionDeny, 0},
		{"no name, not_in", nameNotIn, eip712(1, "", nil), nil, ActionAllow, -1},
		{"chain listed", chainIn, eip712(1, "", nil), nil, ActionDeny, 0},
		{"chain outside a not_in list", chainNotIn, eip712(1, "", nil), nil, ActionDeny, 0},
		{"no chain, not_in", chainNotIn, eip712(0, "", nil), nil, ActionAllow, -1},
		{"personal_sign, chain not_in", chainNotIn, personal, nil, ActionAllow, -1},
		{"a send on another chain", sendsOff1, tx("ETH", "1", bob), nil, ActionDeny, 0},
	})
}
