package policy

import (
	"fmt"
	"math/big"
	"regexp"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/base/apierr"
)

// criterionKinds lists, per criterion type, the optional fields it takes and
// the operations it is meaningful for. A field outside the list is refused so
// that a rule never silently ignores what its author wrote (an amount on a
// recipient criterion would otherwise read as a limit that does nothing).
var criterionKinds = map[string]struct {
	fields     map[string]bool
	operations map[string]bool
}{
	CriterionRecipient: {
		fields:     set("op", "addresses"),
		operations: set(OpTransactionsCreate, OpSignaturesCreate),
	},
	CriterionContract: {
		fields:     set("op", "addresses"),
		operations: set(OpTransactionsCreate, OpSwapsExecute, OpSignaturesCreate),
	},
	CriterionValue: {
		fields:     set("asset", "op", "amount"),
		operations: set(OpTransactionsCreate, OpSwapsExecute, OpSignaturesCreate),
	},
	CriterionRollingTotal: {
		fields:     set("asset", "windowSeconds", "max"),
		operations: set(OpTransactionsCreate, OpSwapsExecute, OpSignaturesCreate),
	},
	CriterionSignatureType: {
		fields:     set("op", "signatureTypes"),
		operations: set(OpSignaturesCreate),
	},
	CriterionVerifyingContract: {
		fields:     set("op", "addresses"),
		operations: set(OpSignaturesCreate),
	},
	CriterionDomainName: {
		fields:     set("op", "names"),
		operations: set(OpSignaturesCreate),
	},
	CriterionChainID: {
		fields:     set("op", "chainIds"),
		operations: set(OpTransactionsCreate, OpSwapsExecute, OpSignaturesCreate),
	},
}

var (
	amountPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	assetPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// Validate checks p's semantics (its shape is the strict JSON decoder's
// job) and returns a validation_failed *apierr.Error whose field errors
// point into the request body (body.rules[2].criteria[0].amount).
func Validate(p Policy) error {
	_, err := Normalize(p)
	return err
}

// Normalize validates p and returns its canonical form: addresses
// checksummed, criteria lists never null. The canonical form is what is
// stored and shown, so two spellings of one address are one rule.
func Normalize(p Policy) (Policy, error) {
	var bad []apierr.FieldError
	if !isAction(p.DefaultAction) {
		bad = append(bad, apierr.Field("body.defaultAction", "must be allow, deny or require_approval"))
	}
	if len(p.Rules) > MaxRules {
		bad = append(bad, apierr.Field("body.rules", "at most %d rules, got %d", MaxRules, len(p.Rules)))
		return Policy{}, invalid(bad)
	}
	out := Policy{Revision: p.Revision, DefaultAction: p.DefaultAction, Rules: make([]Rule, len(p.Rules))}
	for i, r := range p.Rules {
		at := fmt.Sprintf("body.rules[%d]", i)
		if !isAction(r.Action) {
			bad = append(bad, apierr.Field(at+".action", "must be allow, deny or require_approval"))
		}
		if !isOperation(r.Operation) {
			bad = append(bad, apierr.Field(at+".operation", "must be transactions.create, signatures.create or swaps.execute"))
		}
		if len(r.Criteria) > MaxCriteriaPerRule {
			bad = append(bad, apierr.Field(at+".criteria", "at most %d criteria per rule, got %d", MaxCriteriaPerRule, len(r.Criteria)))
			continue
		}
		out.Rules[i] = Rule{Action: r.Action, Operation: r.Operation, Criteria: make([]Criterion, len(r.Criteria))}
		for j, c := range r.Criteria {
			norm, errs := normalizeCriterion(fmt.Sprintf("%s.criteria[%d]", at, j), c, r.Operation)
			bad = append(bad, errs...)
			out.Rules[i].Criteria[j] = norm
		}
	}
	if len(bad) > 0 {
		return Policy{}, invalid(bad)
	}
	return out, nil
}

func invalid(bad []apierr.FieldError) *apierr.Error {
	return apierr.Invalid("Invalid wallet policy.", bad...)
}

func normalizeCriterion(at string, c Criterion, operation string) (Criterion, []apierr.FieldError) {
	kind, ok := criterionKinds[c.Type]
	if !ok {
		return c, []apierr.FieldError{apierr.Field(at+".type", "must be recipient, contract, value, rollingTotal, signatureType, verifyingContract, domainName or chainId")}
	}
	var bad []apierr.FieldError
	if isOperation(operation) && !kind.operations[operation] {
		bad = append(bad, apierr.Field(at+".type", "%s criteria do not apply to %s", c.Type, operation))
	}
	present := map[string]bool{
		"op":             c.Op != "",
		"addresses":      c.Addresses != nil,
		"asset":          c.Asset != "",
		"amount":         c.Amount != "",
		"windowSeconds":  c.WindowSeconds != 0,
		"max":            c.Max != "",
		"signatureTypes": c.SignatureTypes != nil,
		"names":          c.Names != nil,
		"chainIds":       c.ChainIDs != nil,
	}
	for _, f := range []string{"op", "addresses", "asset", "amount", "windowSeconds", "max", "signatureTypes", "names", "chainIds"} {
		if present[f] && !kind.fields[f] {
			bad = append(bad, apierr.Field(at+"."+f, "not a field of a %s criterion", c.Type))
		}
	}
	out := Criterion{Type: c.Type}
	switch c.Type {
	case CriterionRecipient, CriterionContract, CriterionVerifyingContract:
		out.Op = c.Op
		bad = checkListOp(at, c.Op, bad)
		out.Addresses, bad = normalizeAddresses(at+".addresses", c.Addresses, bad)
	case CriterionDomainName:
		out.Op, out.Names = c.Op, c.Names
		bad = checkListOp(at, c.Op, bad)
		bad = checkListLength(at+".names", len(c.Names), bad)
		for k, n := range c.Names {
			if n == "" || len(n) > MaxDomainNameLength || !utf8.ValidString(n) {
				bad = append(bad, apierr.Field(fmt.Sprintf("%s.names[%d]", at, k), "must be 1 to %d bytes of UTF-8", MaxDomainNameLength))
			}
		}
	case CriterionChainID:
		out.Op, out.ChainIDs = c.Op, c.ChainIDs
		bad = checkListOp(at, c.Op, bad)
		bad = checkListLength(at+".chainIds", len(c.ChainIDs), bad)
		for k, id := range c.ChainIDs {
			if id == 0 {
				bad = append(bad, apierr.Field(fmt.Sprintf("%s.chainIds[%d]", at, k), "must be a chain id, 1 or more"))
			}
		}
	case CriterionSignatureType:
		out.Op, out.SignatureTypes = c.Op, c.SignatureTypes
		bad = checkListOp(at, c.Op, bad)
		if len(c.SignatureTypes) == 0 {
			bad = append(bad, apierr.Field(at+".signatureTypes", "required: at least one of personal_sign, eip712"))
		}
		for k, t := range c.SignatureTypes {
			if t != SignaturePersonal && t != SignatureEIP712 {
				bad = append(bad, apierr.Field(fmt.Sprintf("%s.signatureTypes[%d]", at, k), "must be personal_sign or eip712"))
			}
		}
	case CriterionValue:
		out.Asset, out.Op, out.Amount = c.Asset, c.Op, c.Amount
		bad = checkAsset(at+".asset", c.Asset, bad)
		switch c.Op {
		case OpLTE, OpLT, OpGTE, OpGT, OpEQ:
		default:
			bad = append(bad, apierr.Field(at+".op", "must be lte, lt, gte, gt or eq"))
		}
		bad = checkAmount(at+".amount", c.Amount, bad)
	case CriterionRollingTotal:
		out.Asset, out.WindowSeconds, out.Max = c.Asset, c.WindowSeconds, c.Max
		bad = checkAsset(at+".asset", c.Asset, bad)
		if c.WindowSeconds < MinWindowSeconds || c.WindowSeconds > MaxWindowSeconds {
			bad = append(bad, apierr.Field(at+".windowSeconds", "must be between %d and %d", MinWindowSeconds, MaxWindowSeconds))
		}
		bad = checkAmount(at+".max", c.Max, bad)
	}
	return out, bad
}

func checkListOp(at, op string, bad []apierr.FieldError) []apierr.FieldError {
	if op != OpIn && op != OpNotIn {
		return append(bad, apierr.Field(at+".op", "must be in or not_in"))
	}
	return bad
}

func checkListLength(at string, n int, bad []apierr.FieldError) []apierr.FieldError {
	if n == 0 || n > MaxListItems {
		return append(bad, apierr.Field(at, "required: 1 to %d items, got %d", MaxListItems, n))
	}
	return bad
}

func normalizeAddresses(at string, list []string, bad []apierr.FieldError) ([]string, []apierr.FieldError) {
	switch {
	case len(list) == 0:
		return nil, append(bad, apierr.Field(at, "required: 1 to %d addresses", MaxAddresses))
	case len(list) > MaxAddresses:
		return nil, append(bad, apierr.Field(at, "at most %d addresses, got %d", MaxAddresses, len(list)))
	}
	out := make([]string, len(list))
	for k, s := range list {
		if !isStrictHexAddress(s) {
			bad = append(bad, apierr.Field(fmt.Sprintf("%s[%d]", at, k), "must be 0x followed by 40 hex digits"))
			continue
		}
		out[k] = common.HexToAddress(s).Hex()
	}
	return out, bad
}

// isStrictHexAddress demands the lowercase 0x prefix that common.IsHexAddress
// treats as optional, so a policy's addresses have one spelling.
func isStrictHexAddress(s string) bool {
	return len(s) == 42 && s[:2] == "0x" && common.IsHexAddress(s)
}

func checkAsset(at, asset string, bad []apierr.FieldError) []apierr.FieldError {
	if asset == "" {
		return append(bad, apierr.Field(at, "required: the asset symbol"))
	}
	if len(asset) > maxAssetSymbolLength || !assetPattern.MatchString(asset) {
		return append(bad, apierr.Field(at, "must be an asset symbol of at most %d letters, digits, '.', '_' or '-'", maxAssetSymbolLength))
	}
	return bad
}

func checkAmount(at, s string, bad []apierr.FieldError) []apierr.FieldError {
	if _, ok := parseAmount(s); !ok {
		return append(bad, apierr.Field(at, "must be a non-negative integer of base units written in at most %d decimal digits, without sign or leading zeros", MaxAmountDigits))
	}
	return bad
}

// parseAmount reads a validated amount; it is also the evaluator's guard
// against a policy that never went through Validate.
func parseAmount(s string) (*big.Int, bool) {
	if len(s) == 0 || len(s) > MaxAmountDigits || !amountPattern.MatchString(s) {
		return nil, false
	}
	return new(big.Int).SetString(s, 10)
}

func isAction(a string) bool {
	return a == ActionAllow || a == ActionDeny || a == ActionRequireApproval
}

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}
