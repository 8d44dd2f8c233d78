package policy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"platformapi/shared/base/apierr"
)

func addresses(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("0x%040x", i+1)
	}
	return out
}

func TestValidateRefusesWithThePreciseLocation(t *testing.T) {
	one := func(cs ...Criterion) Policy {
		return Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionAllow, OpSwapsExecute), rule(ActionDeny, OpTransactionsCreate, cs...)}}
	}
	sigRule := func(cs ...Criterion) Policy {
		return Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpSignaturesCreate, cs...)}}
	}
	tooManyRules := Policy{DefaultAction: ActionAllow, Rules: make([]Rule, MaxRules+1)}
	for i := range tooManyRules.Rules {
		tooManyRules.Rules[i] = rule(ActionAllow, OpTransactionsCreate)
	}
	tooManyCriteria := make([]Criterion, MaxCriteriaPerRule+1)
	for i := range tooManyCriteria {
		tooManyCriteria[i] = value("ETH", OpGT, "1")
	}
	cases := []struct {
		name     string
		policy   Policy
		location string
		message  string
	}{
		{"default action missing", Policy{Rules: []Rule{}}, "body.defaultAction", "must be"},
		{"unknown action", Policy{DefaultAction: ActionAllow, Rules: []Rule{rule("permit", OpTransactionsCreate)}}, "body.rules[0].action", "must be"},
		{"unknown operation", Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionAllow, "transactions.send")}}, "body.rules[0].operation", "must be"},
		{"51 rules", tooManyRules, "body.rules", "at most 50"},
		{"11 criteria", one(tooManyCriteria...), "body.rules[1].criteria", "at most 10"},
		{"unknown criterion type", one(Criterion{Type: "time"}), "body.rules[1].criteria[0].type", "must be"},
		{"101 addresses", one(recipient(OpIn, addresses(MaxAddresses+1)...)), "body.rules[1].criteria[0].addresses", "at most 100"},
		{"no addresses", one(recipient(OpIn)), "body.rules[1].criteria[0].addresses", "required"},
		{"address without 0x", one(recipient(OpIn, alice.Hex(), alice.Hex()[2:]+"00")), "body.rules[1].criteria[0].addresses[1]", "0x followed by 40 hex"},
		{"address too short", one(recipient(OpIn, alice.Hex()[:41])), "body.rules[1].criteria[0].addresses[0]", "0x followed by 40 hex"},
		{"address not hex", one(recipient(OpIn, "0x"+strings.Repeat("g", 40))), "body.rules[1].criteria[0].addresses[0]", "0x followed by 40 hex"},
		{"address with 0X", one(recipient(OpIn, "0X"+alice.Hex()[2:])), "body.rules[1].criteria[0].addresses[0]", "0x followed by 40 hex"},
		{"recipient op", one(recipient(OpLTE, alice.Hex())), "body.rules[1].criteria[0].op", "in or not_in"},
		{"contract without op", one(Criterion{Type: CriterionContract, Addresses: []string{alice.Hex()}}), "body.rules[1].criteria[0].op", "in or not_in"},
		{"value op", one(value("USDC", OpIn, "1")), "body.rules[1].criteria[0].op", "lte, lt, gte, gt or eq"},
		{"value without asset", one(value("", OpGT, "1")), "body.rules[1].criteria[0].asset", "required"},
		{"value asset with spaces", one(value("US DC", OpGT, "1")), "body.rules[1].criteria[0].asset", "asset symbol"},
		{"amount negative", one(value("USDC", OpGT, "-1")), "body.rules[1].criteria[0].amount", "non-negative integer"},
		{"amount fractional", one(value("USDC", OpGT, "1.5")), "body.rules[1].criteria[0].amount", "non-negative integer"},
		{"amount leading zero", one(value("USDC", OpGT, "01")), "body.rules[1].criteria[0].amount", "leading zeros"},
		{"amount exponent", one(value("USDC", OpGT, "1e6")), "body.rules[1].criteria[0].amount", "non-negative integer"},
		{"amount empty", one(value("USDC", OpGT, "")), "body.rules[1].criteria[0].amount", "non-negative integer"},
		{"amount 79 digits", one(value("USDC", OpGT, "1"+strings.Repeat("0", 78))), "body.rules[1].criteria[0].amount", "at most 78"},
		{"max 79 digits", one(rolling("USDC", 3600, strings.Repeat("9", 79))), "body.rules[1].criteria[0].max", "at most 78"},
		{"window too short", one(rolling("USDC", 59, "1")), "body.rules[1].criteria[0].windowSeconds", "between 60 and 2592000"},
		{"window too long", one(rolling("USDC", 2592001, "1")), "body.rules[1].criteria[0].windowSeconds", "between 60 and 2592000"},
		{"window missing", one(rolling("USDC", 0, "1")), "body.rules[1].criteria[0].windowSeconds", "between"},
		{"field of another criterion", one(Criterion{Type: CriterionRecipient, Op: OpIn, Addresses: []string{alice.Hex()}, Amount: "5"}),
			"body.rules[1].criteria[0].amount", "not a field of a recipient criterion"},
		{"signatureType on transactions", one(Criterion{Type: CriterionSignatureType, Op: OpIn, SignatureTypes: []string{SignatureEIP712}}),
			"body.rules[1].criteria[0].type", "signatureType criteria do not apply to transactions.create"},
		{"verifyingContract on transactions", one(Criterion{Type: CriterionVerifyingContract, Op: OpIn, Addresses: []string{alice.Hex()}}),
			"body.rules[1].criteria[0].type", "verifyingContract criteria do not apply to transactions.create"},
		{"domainName on swaps", Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpSwapsExecute, Criterion{Type: CriterionDomainName, Op: OpIn, Names: []string{"USD Coin"}})}},
			"body.rules[0].criteria[0].type", "domainName criteria do not apply to swaps.execute"},
		{"verifyingContract without addresses", sigRule(Criterion{Type: CriterionVerifyingContract, Op: OpIn}), "body.rules[0].criteria[0].addresses", "required"},
		{"domainName without names", sigRule(Criterion{Type: CriterionDomainName, Op: OpNotIn}), "body.rules[0].criteria[0].names", "required"},
		{"empty domain name", sigRule(Criterion{Type: CriterionDomainName, Op: OpIn, Names: []string{"Permit2", ""}}), "body.rules[0].criteria[0].names[1]", "1 to 256 bytes"},
		{"long domain name", sigRule(Criterion{Type: CriterionDomainName, Op: OpIn, Names: []string{strings.Repeat("n", MaxDomainNameLength+1)}}),
			"body.rules[0].criteria[0].names[0]", "1 to 256 bytes"},
		{"too many names", sigRule(Criterion{Type: CriterionDomainName, Op: OpIn, Names: make([]string, MaxListItems+1)}), "body.rules[0].criteria[0].names", "1 to 100 items"},
		{"chain id 0", sigRule(Criterion{Type: CriterionChainID, Op: OpIn, ChainIDs: []uint64{1, 0}}), "body.rules[0].criteria[0].chainIds[1]", "1 or more"},
		{"chainId compared", sigRule(Criterion{Type: CriterionChainID, Op: OpLTE, ChainIDs: []uint64{1}}), "body.rules[0].criteria[0].op", "in or not_in"},
		{"names on chainId", sigRule(Criterion{Type: CriterionChainID, Op: OpIn, ChainIDs: []uint64{1}, Names: []string{"x"}}),
			"body.rules[0].criteria[0].names", "not a field of a chainId criterion"},
		{"recipient on swaps", Policy{DefaultAction: ActionAllow, Rules: []Rule{rule(ActionDeny, OpSwapsExecute, recipient(OpIn, alice.Hex()))}},
			"body.rules[0].criteria[0].type", "recipient criteria do not apply to swaps.execute"},
		{"unknown signature type", sigRule(Criterion{Type: CriterionSignatureType, Op: OpIn, SignatureTypes: []string{"eth_sign"}}),
			"body.rules[0].criteria[0].signatureTypes[0]", "personal_sign or eip712"},
		{"no signature types", sigRule(Criterion{Type: CriterionSignatureType, Op: OpNotIn}),
			"body.rules[0].criteria[0].signatureTypes", "required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.policy)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed {
				t.Fatalf("got %v, want a validation_failed error", err)
			}
			for _, f := range ae.Errors {
				if f.Location == c.location && strings.Contains(f.Message, c.message) {
					return
				}
			}
			t.Fatalf("field errors %+v lack %s: ...%s...", ae.Errors, c.location, c.message)
		})
	}
}

func TestValidateAcceptsEveryBoundExactly(t *testing.T) {
	full := make([]Criterion, MaxCriteriaPerRule)
	for i := range full {
		full[i] = value("ETH", OpGT, "1")
	}
	full[0] = recipient(OpIn, addresses(MaxAddresses)...)
	full[1] = value("USDC", OpLTE, uint256x)
	full[2] = rolling("USDC", MinWindowSeconds, "0")
	full[3] = rolling("WETH", MaxWindowSeconds, strings.Repeat("9", 78))
	p := Policy{DefaultAction: ActionRequireApproval, Rules: make([]Rule, MaxRules)}
	for i := range p.Rules {
		p.Rules[i] = rule(ActionDeny, OpTransactionsCreate, full...)
	}
	p.Rules[0] = rule(ActionAllow, OpSignaturesCreate, Criterion{Type: CriterionSignatureType, Op: OpIn, SignatureTypes: []string{SignaturePersonal, SignatureEIP712}})
	p.Rules[1] = rule(ActionAllow, OpSwapsExecute, Criterion{Type: CriterionContract, Op: OpNotIn, Addresses: []string{alice.Hex()}}, value("WETH", OpEQ, "0"), rolling("WETH", 3600, "1"))
	names, chains := make([]string, MaxListItems), make([]uint64, MaxListItems)
	for i := range names {
		names[i], chains[i] = strings.Repeat("n", 1+i%MaxDomainNameLength), uint64(i+1)
	}
	names[0] = strings.Repeat("é", MaxDomainNameLength/2)
	p.Rules[2] = rule(ActionDeny, OpSignaturesCreate, Criterion{Type: CriterionVerifyingContract, Op: OpNotIn, Addresses: addresses(MaxAddresses)},
		Criterion{Type: CriterionDomainName, Op: OpIn, Names: names}, Criterion{Type: CriterionChainID, Op: OpIn, ChainIDs: chains},
		recipient(OpIn, alice.Hex()), Criterion{Type: CriterionContract, Op: OpIn, Addresses: []string{usdc.Hex()}},
		value("USDC", OpGT, "10000000"), rolling("USDC", 86400, "10000000"))
	p.Rules[3] = rule(ActionDeny, OpSwapsExecute, Criterion{Type: CriterionChainID, Op: OpNotIn, ChainIDs: []uint64{1337}})
	if err := Validate(p); err != nil {
		t.Fatal(err)
	}
}

func TestNormalizeChecksumsAddressesAndNeverNullsCriteria(t *testing.T) {
	p := Policy{Revision: 7, DefaultAction: ActionAllow, Rules: []Rule{
		{Action: ActionDeny, Operation: OpTransactionsCreate, Criteria: []Criterion{recipient(OpIn, strings.ToLower(usdc.Hex()))}},
		{Action: ActionAllow, Operation: OpSwapsExecute},
	}}
	n, err := Normalize(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Rules[0].Criteria[0].Addresses[0]; got != "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" {
		t.Errorf("address %s, want the checksummed spelling", got)
	}
	if n.Rules[1].Criteria == nil {
		t.Error("criteria of a rule without criteria normalized to null")
	}
	if n.Revision != 7 || p.Rules[0].Criteria[0].Addresses[0] != strings.ToLower(usdc.Hex()) {
		t.Error("normalize must keep the revision and leave its input alone")
	}
}
