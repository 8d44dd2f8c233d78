package policy

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

var (
	now      = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	alice    = common.HexToAddress("0x1111111111111111111111111111111111111111")
	bob      = common.HexToAddress("0x2222222222222222222222222222222222222222")
	usdc     = common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	uint256x = "115792089237316195423570985008687907853269984665640564039457584007913129639935" // 2^256-1, 78 digits
)

func amt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

func tx(asset, amount string, to common.Address) Intent {
	return Intent{Operation: OpTransactionsCreate, ChainID: 1337, To: to, Recipient: to, Asset: asset, Amount: amt(amount)}
}

func rule(action, op string, cs ...Criterion) Rule {
	if cs == nil {
		cs = []Criterion{}
	}
	return Rule{Action: action, Operation: op, Criteria: cs}
}

func recipient(op string, addrs ...string) Criterion {
	return Criterion{Type: CriterionRecipient, Op: op, Addresses: addrs}
}

func value(asset, op, amount string) Criterion {
	return Criterion{Type: CriterionValue, Asset: asset, Op: op, Amount: amount}
}

func rolling(asset string, window int64, max string) Criterion {
	return Criterion{Type: CriterionRollingTotal, Asset: asset, WindowSeconds: window, Max: max}
}

func ruleIndex(d Decision) int {
	if d.RuleIndex == nil {
		return -1
	}
	return *d.RuleIndex
}

type evalCase struct {
	name    string
	policy  Policy
	intent  Intent
	history []Spend
	want    string
	rule    int // -1: the default decided
}

func runEval(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := Validate(c.policy); err != nil {
				t.Fatalf("test policy invalid: %v", err)
			}
			d := Evaluate(c.policy, c.intent, c.history, now)
			if d.Action != c.want || ruleIndex(d) != c.rule {
				t.Fatalf("decision %s by rule %d (%s), want %s by rule %d", d.Action, ruleIndex(d), d.Reason, c.want, c.rule)
			}
			if d.Reason == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

func TestDenyWinsOverAllowAndRequireApproval(t *testing.T) {
	allowAll := rule(ActionAllow, OpTransactionsCreate)
	approveAll := rule(ActionRequireApproval, OpTransactionsCreate)
	denyBob := rule(ActionDeny, OpTransactionsCreate, recipient(OpIn, bob.Hex()))
	runEval(t, []evalCase{
		{"deny after allow", Policy{DefaultAction: ActionAllow, Rules: []Rule{allowAll, denyBob}}, tx("ETH", "1", bob), nil, ActionDeny, 1},
		{"deny before allow", Policy{DefaultAction: ActionAllow, Rules: []Rule{denyBob, allowAll}}, tx("ETH", "1", bob), nil, ActionDeny, 0},
		{"deny after require_approval", Policy{DefaultAction: ActionAllow, Rules: []Rule{approveAll, allowAll, denyBob}}, tx("ETH", "1", bob), nil, ActionDeny, 2},
		{"deny that does not match leaves require_approval", Policy{DefaultAction: ActionAllow, Rules: []Rule{approveAll, allowAll, denyBob}}, tx("ETH", "1", alice), nil, ActionRequireApproval, 0},
		{"matching allow rule beats a deny default", Policy{DefaultAction: ActionDeny, Rules: []Rule{allowAll}}, tx("ETH", "1", bob), nil, ActionAllow, 0},
	})
}

func TestRequireApprovalWinsOverAllow(t *testing.T) {
	runEval(t, []evalCase{
		{"approval after allow", Policy{DefaultAction: ActionDeny, Rules: []Rule{
			rule(ActionAllow, OpTransactionsCreate),
			rule(ActionRequireApproval, OpTransactionsCreate, value("USDC", OpGT, "1000000")),
		}}, tx("USDC", "1000001", usdc), nil, ActionRequireApproval, 1},
		{"small amount only allowed", Policy{DefaultAction: ActionDeny, Rules: []Rule{
			rule(ActionAllow, OpTransactionsCreate),
			rule(ActionRequireApproval, OpTransactionsCreate, value("USDC", OpGT, "1000000")),
		}}, tx("USDC", "1000000", usdc), nil, ActionAllow, 0},
		{"first of equal actions decides", Policy{DefaultAction: ActionDeny, Rules: []Rule{
			rule(ActionAllow, OpTransactionsCreate, recipient(OpNotIn, bob.Hex())),
			rule(ActionRequireApproval, OpTransactionsCreate, value("USDC", OpGTE, "5")),
			rule(ActionRequireApproval, OpTransactionsCreate),
		}}, tx("USDC", "5", alice), nil, ActionRequireApproval, 1},
	})
}

func TestDefaultActionAppliesWhenNoRuleMatches(t *testing.T) {
	p := func(def string) Policy {
		return Policy{DefaultAction: def, Rules: []Rule{
			rule(ActionAllow, OpSwapsExecute),
			rule(ActionDeny, OpTransactionsCreate, recipient(OpIn, bob.Hex())),
		}}
	}
	runEval(t, []evalCase{
		{"allow", p(ActionAllow), tx("ETH", "1", alice), nil, ActionAllow, -1},
		{"deny", p(ActionDeny), tx("ETH", "1", alice), nil, ActionDeny, -1},
		{"require_approval", p(ActionRequireApproval), tx("ETH", "1", alice), nil, ActionRequireApproval, -1},
		{"rule of another operation ignored", Policy{DefaultAction: ActionDeny, Rules: []Rule{rule(ActionAllow, OpSwapsExecute)}},
			tx("ETH", "1", alice), nil, ActionDeny, -1},
	})
}

func TestDefaultPolicyAllowsTransactionsAndSwapsButSignaturesNeedApproval(t *testing.T) {
	p := Default()
	swap := Intent{Operation: OpSwapsExecute, To: usdc, Asset: "USDC", Amount: amt("10")}
	sig := func(typ string) Intent { return Intent{Operation: OpSignaturesCreate, SignatureType: typ} }
	runEval(t, []evalCase{
		{"transaction", p, tx("ETH", "1", alice), nil, ActionAllow, -1},
		{"swap", p, swap, nil, ActionAllow, -1},
		{"personal_sign", p, sig(SignaturePersonal), nil, ActionRequireApproval, 0},
		{"eip712", p, sig(SignatureEIP712), nil, ActionRequireApproval, 0},
	})
	if n, err := Normalize(p); err != nil || n.Rules[0].Criteria == nil {
		t.Fatalf("default policy normalizes to %+v, %v", n, err)
	}
}

func TestEmptyCriteriaMatchEveryIntentOfTheOperation(t *testing.T) {
	p := Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate)}}
	runEval(t, []evalCase{
		{"native", p, tx("ETH", "0", alice), nil, ActionDeny, 0},
		{"token", p, tx("USDC", uint256x, bob), nil, ActionDeny, 0},
		{"other operation untouched", p, Intent{Operation: OpSignaturesCreate, SignatureType: SignaturePersonal}, nil, ActionAllow, -1},
	})
}

func TestRecipientMembershipIsCaseInsensitive(t *testing.T) {
	lower := strings.ToLower(usdc.Hex())
	upper := "0x" + strings.ToUpper(usdc.Hex()[2:])
	in := func(addrs ...string) Policy {
		return Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate, recipient(OpIn, addrs...))}}
	}
	notIn := func(addrs ...string) Policy {
		return Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate, recipient(OpNotIn, addrs...))}}
	}
	runEval(t, []evalCase{
		{"in, lowercase", in(lower), tx("ETH", "1", usdc), nil, ActionDeny, 0},
		{"in, uppercase", in(upper), tx("ETH", "1", usdc), nil, ActionDeny, 0},
		{"in, absent", in(lower, bob.Hex()), tx("ETH", "1", alice), nil, ActionAllow, -1},
		{"not_in, present", notIn(upper), tx("ETH", "1", usdc), nil, ActionAllow, -1},
		{"not_in, absent", notIn(lower), tx("ETH", "1", alice), nil, ActionDeny, 0},
	})
}

func TestRecipientSeesTheTokenRecipientAndContractTheCalledAddress(t *testing.T) {
	token := Intent{Operation: OpTransactionsCreate, To: usdc, Recipient: bob, Asset: "USDC", Amount: amt("1")}
	runEval(t, []evalCase{
		{"recipient is the decoded target", Policy{DefaultAction: ActionAllow, Rules: []Rule{
			rule(ActionDeny, OpTransactionsCreate, recipient(OpIn, bob.Hex()))}}, token, nil, ActionDeny, 0},
		{"recipient is not the token", Policy{DefaultAction: ActionAllow, Rules: []Rule{
			rule(ActionDeny, OpTransactionsCreate, recipient(OpIn, usdc.Hex()))}}, token, nil, ActionAllow, -1},
		{"contract is the token", Policy{DefaultAction: ActionDeny, Rules: []Rule{
			rule(ActionAllow, OpTransactionsCreate, Criterion{Type: CriterionContract, Op: OpIn, Addresses: []string{usdc.Hex()}})}},
			token, nil, ActionAllow, 0},
		{"contract not_in", Policy{DefaultAction: ActionAllow, Rules: []Rule{
			rule(ActionDeny, OpTransactionsCreate, Criterion{Type: CriterionContract, Op: OpNotIn, Addresses: []string{usdc.Hex()}})}},
			token, nil, ActionAllow, -1},
	})
}

func TestValueComparesBaseUnitsOfItsAssetOnly(t *testing.T) {
	justBelow := "115792089237316195423570985008687907853269984665640564039457584007913129639934"
	p := func(op, amount string) Policy {
		return Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate, value("USDC", op, amount))}}
	}
	runEval(t, []evalCase{
		{"lte equal", p(OpLTE, "100"), tx("USDC", "100", bob), nil, ActionDeny, 0},
		{"lte above", p(OpLTE, "100"), tx("USDC", "101", bob), nil, ActionAllow, -1},
		{"lt equal", p(OpLT, "100"), tx("USDC", "100", bob), nil, ActionAllow, -1},
		{"lt below", p(OpLT, "100"), tx("USDC", "99", bob), nil, ActionDeny, 0},
		{"gte equal", p(OpGTE, "100"), tx("USDC", "100", bob), nil, ActionDeny, 0},
		{"gte below", p(OpGTE, "100"), tx("USDC", "99", bob), nil, ActionAllow, -1},
		{"gt equal", p(OpGT, "100"), tx("USDC", "100", bob), nil, ActionAllow, -1},
		{"gt above", p(OpGT, "100"), tx("USDC", "101", bob), nil, ActionDeny, 0},
		{"eq", p(OpEQ, "100"), tx("USDC", "100", bob), nil, ActionDeny, 0},
		{"eq off by one", p(OpEQ, "100"), tx("USDC", "1000", bob), nil, ActionAllow, -1},
		{"78 digits gt", p(OpGT, justBelow), tx("USDC", uint256x, bob), nil, ActionDeny, 0},
		{"78 digits not gt", p(OpGT, uint256x), tx("USDC", uint256x, bob), nil, ActionAllow, -1},
		{"asset case-insensitive", p(OpGT, "1"), tx("usdc", "2", bob), nil, ActionDeny, 0},
		{"other asset never matches", p(OpGTE, "0"), tx("ETH", "5", bob), nil, ActionAllow, -1},
	})
}

func TestRollingTotalCapsSpendInTheWindow(t *testing.T) {
	const day = 86400
	capUSDC := Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate, rolling("USDC", day, "1000"))}}
	history := []Spend{
		{Asset: "USDC", Amount: amt("600"), At: now.Add(-time.Hour)},
		{Asset: "USDC", Amount: amt("300"), At: now.Add(-23 * time.Hour)},
		{Asset: "USDC", Amount: amt("5000"), At: now.Add(-day * time.Second)},        // exactly a window ago: outside
		{Asset: "USDC", Amount: amt("5000"), At: now.Add(-(day + 60) * time.Second)}, // long ago
		{Asset: "ETH", Amount: amt("5000"), At: now.Add(-time.Minute)},
		{Asset: "WETH", Amount: amt("5000"), At: now.Add(-time.Minute)},
	}
	runEval(t, []evalCase{
		{"exactly at max allowed", capUSDC, tx("USDC", "100", bob), history, ActionAllow, -1},
		{"one base unit over denied", capUSDC, tx("USDC", "101", bob), history, ActionDeny, 0},
		{"empty history, intent alone over", capUSDC, tx("USDC", "1001", bob), nil, ActionDeny, 0},
		{"empty history, intent alone at max", capUSDC, tx("USDC", "1000", bob), nil, ActionAllow, -1},
		{"other asset's intent not capped", capUSDC, tx("ETH", "100000", bob), history, ActionAllow, -1},
		{"spends outside a shorter window ignored", Policy{DefaultAction: ActionAllow, Rules: []Rule{
			rule(ActionDeny, OpTransactionsCreate, rolling("USDC", 2*3600, "1000"))}},
			tx("USDC", "400", bob), history, ActionAllow, -1},
		{"78-digit totals", Policy{DefaultAction: ActionAllow, Rules: []Rule{
			rule(ActionDeny, OpTransactionsCreate, rolling("USDC", day, uint256x))}},
			tx("USDC", uint256x, bob), []Spend{{Asset: "USDC", Amount: amt("1"), At: now}}, ActionDeny, 0},
	})
}

func TestSignatureTypeMembership(t *testing.T) {
	p := Policy{DefaultAction: ActionRequireApproval, Rules: []Rule{
		rule(ActionAllow, OpSignaturesCreate, Criterion{Type: CriterionSignatureType, Op: OpIn, SignatureTypes: []string{SignaturePersonal}}),
		rule(ActionDeny, OpSignaturesCreate, Criterion{Type: CriterionSignatureType, Op: OpNotIn, SignatureTypes: []string{SignaturePersonal, SignatureEIP712}}),
	}}
	sig := func(typ string) Intent { return Intent{Operation: OpSignaturesCreate, SignatureType: typ} }
	runEval(t, []evalCase{
		{"in", p, sig(SignaturePersonal), nil, ActionAllow, 0},
		{"not in the allow list", p, sig(SignatureEIP712), nil, ActionRequireApproval, -1},
	})
}

func TestUnjudgeableIntentIsDenied(t *testing.T) {
	p := Policy{DefaultAction: ActionAllow, Rules: []Rule{}}
	for name, in := range map[string]Intent{
		"unknown operation": {Operation: "transactions.delete"},
		"negative amount":   {Operation: OpTransactionsCreate, Asset: "ETH", Amount: big.NewInt(-1)},
	} {
		if d := Evaluate(p, in, nil, now); d.Action != ActionDeny {
			t.Errorf("%s: %+v, want deny", name, d)
		}
	}
}

func TestReasonNamesRuleAndCause(t *testing.T) {
	p := Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpTransactionsCreate, rolling("USDC", 3600, "10"))}}
	d := Evaluate(p, tx("USDC", "11", bob), nil, now)
	for _, want := range []string{"rule 0", "deny", "USDC", "11", "max 10"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason %q lacks %q", d.Reason, want)
		}
	}
}

func TestMaxRollingWindowIsTheLongestWindow(t *testing.T) {
	p := Policy{DefaultAction: ActionAllow, Rules: []Rule{
		rule(ActionDeny, OpTransactionsCreate, rolling("USDC", 3600, "1")),
		rule(ActionDeny, OpSwapsExecute, value("ETH", OpGT, "1"), rolling("WETH", 7200, "1")),
	}}
	if got := MaxRollingWindow(p); got != 2*time.Hour {
		t.Fatalf("got %v, want 2h", got)
	}
	if got := MaxRollingWindow(Default()); got != 0 {
		t.Fatalf("default policy: got %v, want 0", got)
	}
}
