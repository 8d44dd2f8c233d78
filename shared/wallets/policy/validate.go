package policy

import (
	"fmt"
	"math/big"
	"regexp"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/apierr"
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
		operations: set(OpTransactionsCreate),
	},
	CriterionContract: {
		fields:     set("op", "addresses"),
		operations: set(OpTransactionsCreate, OpSwapsExecute),
	},
	CriterionValue: {
		fields:     set("asset", "op", "amount"),
		operations: set(OpTransactionsCreate, OpSwapsExecute),
	},
	CriterionRollingTotal: {
		fields:     set("asset", "windowSeconds", "max"),
		operations: set(OpTransactionsCreate, OpSwapsExecute),
	},
	CriterionSignatureType: {
		fields:     set("op", "signatureTypes"),
		operations: set(OpSignaturesCreate),
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
		return c, []apierr.FieldError{apierr.Field(at+".type", "must be recipient, contract, value, rollingTotal or signatureType")}
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
	}
	for _, f := range []string{"op", "addresses", "asset", "amount", "windowSeconds", "max", "signatureTypes"} {
		if present[f] && !kind.fields[f] {
			bad = append(bad, apierr.Field(at+"."+f, "not a field of a %s criterion", c.Type))
		}
	}
	out := Criterion{Type: c.Type}
	switch c.Type {
	case CriterionRecipient, CriterionContract:
		out.Op = c.Op
		if c.Op != OpIn && c.Op != OpNotIn {
			bad = append(bad, apierr.Field(at+".op", "must be in or not_in"))
		}
		out.Addresses, bad = normalizeAddresses(at+".addresses", c.Addresses, bad)
	case CriterionSignatureType:
		out.Op, out.SignatureTypes = c.Op, c.SignatureTypes
		if c.Op != OpIn && c.Op != OpNotIn {
			bad = append(bad, apierr.Field(at+".op", "must be in or not_in"))
		}
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
