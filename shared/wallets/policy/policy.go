// Package policy is the managed-wallet policy engine (CONTRACT "Managed
// wallets"): the rule document a project attaches to a wallet, its
// validation, and the decision it gives for one intent (a transaction, a
// signature or a swap) against the wallet's recent spends. It is pure: no
// store, no chain, no clock of its own. The caller supplies the spend history
// and the time, and is responsible for making "evaluate, then reserve the
// spend" atomic so that rolling totals stay exact under concurrency.
package policy

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Actions a rule (or the default) can take.
const (
	ActionAllow           = "allow"
	ActionDeny            = "deny"
	ActionRequireApproval = "require_approval"
)

// Operations a rule can govern.
const (
	OpTransactionsCreate = "transactions.create"
	OpSignaturesCreate   = "signatures.create"
	OpSwapsExecute       = "swaps.execute"
)

// Criterion types.
const (
	CriterionRecipient     = "recipient"
	CriterionContract      = "contract"
	CriterionValue         = "value"
	CriterionRollingTotal  = "rollingTotal"
	CriterionSignatureType = "signatureType"
)

// Criterion operators: list membership for recipient, contract and
// signatureType; comparisons for value.
const (
	OpIn    = "in"
	OpNotIn = "not_in"
	OpLTE   = "lte"
	OpLT    = "lt"
	OpGTE   = "gte"
	OpGT    = "gt"
	OpEQ    = "eq"
)

// Signature types (the "type" of a signature quote).
const (
	SignaturePersonal = "personal_sign"
	SignatureEIP712   = "eip712"
)

// Bounds of a policy document: a policy is evaluated on every send, so its
// cost must stay small and predictable.
const (
	MaxRules             = 50
	MaxCriteriaPerRule   = 10
	MaxAddresses         = 100
	MaxAmountDigits      = 78 // 2^256-1 has 78 decimal digits
	MinWindowSeconds     = 60
	MaxWindowSeconds     = 30 * 24 * 60 * 60
	maxAssetSymbolLength = 32
)

// Policy is a wallet's whole rule document. It is replaced as a whole; the
// revision makes concurrent replacements detectable.
type Policy struct {
	Revision      int64  `json:"revision" doc:"Incremented on every replacement; send it back as expectedRevision to replace the policy"`
	DefaultAction string `json:"defaultAction" enum:"allow,deny,require_approval" doc:"What happens to an intent no rule applies to"`
	Rules         []Rule `json:"rules" maxItems:"50" doc:"At most 50 rules. A rule applies when its operation is the intent's and all its criteria match; among applicable rules deny wins over require_approval, which wins over allow"`
}

// Rule is one line of a policy.
type Rule struct {
	Action    string      `json:"action" enum:"allow,deny,require_approval" doc:"What happens to an intent this rule applies to"`
	Operation string      `json:"operation" enum:"transactions.create,signatures.create,swaps.execute" doc:"The operation this rule governs"`
	Criteria  []Criterion `json:"criteria" maxItems:"10" doc:"At most 10 criteria, all of which must match for the rule to apply. An empty list matches every intent of the operation. recipient, contract, value and rollingTotal apply to transactions.create; contract, value and rollingTotal to swaps.execute; signatureType to signatures.create"`
}

// Criterion is one condition of a rule. Its type decides which other fields
// it takes; any other field is refused:
//
//   - recipient {op: in|not_in, addresses}: the final recipient (the ERC-20
//     transfer or approve target for a token, the "to" for the native asset).
//   - contract {op: in|not_in, addresses}: the address the transaction calls
//     (the token contract for ERC-20, the router for a swap, the recipient
//     itself for a native transfer).
//   - value {asset, op: lte|lt|gte|gt|eq, amount}: the intent's amount in base
//     units; matches only intents of that asset.
//   - rollingTotal {asset, windowSeconds, max}: matches an intent of that asset
//     when the wallet's spends of the asset in the last windowSeconds plus this
//     intent's amount would exceed max, so a deny rule with it caps spending.
//   - signatureType {op: in|not_in, signatureTypes}: personal_sign or eip712.
type Criterion struct {
	Type           string   `json:"type" enum:"recipient,contract,value,rollingTotal,signatureType" doc:"recipient {op, addresses}; contract {op, addresses}; value {asset, op, amount}; rollingTotal {asset, windowSeconds, max}; signatureType {op, signatureTypes}"`
	Op             string   `json:"op,omitempty" enum:"in,not_in,lte,lt,gte,gt,eq" doc:"in or not_in for recipient, contract and signatureType; lte, lt, gte, gt or eq for value"`
	Addresses      []string `json:"addresses,omitempty" maxItems:"100" pattern:"^0x[0-9a-fA-F]{40}$" doc:"recipient and contract: 1 to 100 addresses, compared case-insensitively"`
	Asset          string   `json:"asset,omitempty" maxLength:"32" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]*$" doc:"value and rollingTotal: the asset symbol (ETH, USDC, WETH), compared case-insensitively"`
	Amount         string   `json:"amount,omitempty" pattern:"^(0|[1-9][0-9]{0,77})$" doc:"value: decimal string of base units"`
	WindowSeconds  int64    `json:"windowSeconds,omitempty" minimum:"60" maximum:"2592000" doc:"rollingTotal: the window, 60 seconds to 30 days"`
	Max            string   `json:"max,omitempty" pattern:"^(0|[1-9][0-9]{0,77})$" doc:"rollingTotal: the largest total (decimal string of base units) the window may reach"`
	SignatureTypes []string `json:"signatureTypes,omitempty" enum:"personal_sign,eip712" doc:"signatureType: the signature types compared"`
}

// Default is the policy of a new wallet: transactions and swaps are allowed,
// signatures need approval. Signing arbitrary messages can authorise spending
// elsewhere (permits, orders), so it is never silent by default. This is
// modelled as defaultAction allow plus one require_approval rule for
// signatures.create whose empty criteria list matches every signature.
func Default() Policy {
	return Policy{
		Revision:      1,
		DefaultAction: ActionAllow,
		Rules: []Rule{{
			Action:    ActionRequireApproval,
			Operation: OpSignaturesCreate,
			Criteria:  []Criterion{},
		}},
	}
}

// MaxRollingWindow is the longest rollingTotal window of p (0 when it has
// none): spends older than that can never count again and may be pruned.
func MaxRollingWindow(p Policy) time.Duration {
	var longest int64
	for _, r := range p.Rules {
		for _, c := range r.Criteria {
			if c.Type == CriterionRollingTotal && c.WindowSeconds > longest {
				longest = c.WindowSeconds
			}
		}
	}
	return time.Duration(longest) * time.Second
}

// Intent is what a wallet is asked to do, as the policy sees it.
type Intent struct {
	Operation string
	ChainID   uint64
	// To is the address the transaction calls: the token contract for an
	// ERC-20 transfer, the router for a swap, the recipient for a native
	// transfer. Zero for signatures.
	To common.Address
	// Recipient is who finally receives: the decoded ERC-20 transfer or
	// approve target (see DecodeERC20), or To for the native asset.
	Recipient common.Address
	// Asset is the symbol of what is spent (ETH, USDC, WETH).
	Asset string
	// Amount is in base units; nil for signatures.
	Amount        *big.Int
	SignatureType string
}

// Spend is one past reserved spend of the wallet, as counted by rollingTotal.
type Spend struct {
	Asset  string
	Amount *big.Int
	At     time.Time
}

// Decision is the policy's answer for one intent.
type Decision struct {
	Action    string `json:"decision" enum:"allow,deny,require_approval" doc:"What the policy decided"`
	RuleIndex *int   `json:"ruleIndex" nullable:"true" doc:"Index in rules of the deciding rule; null when the default action decided"`
	Reason    string `json:"reason" doc:"Which rule decided and why"`
}

var precedence = map[string]int{ActionAllow: 1, ActionRequireApproval: 2, ActionDeny: 3}

// Evaluate decides in against p, which must have passed Validate. A rule applies when its operation is the
// intent's and all of its criteria match; among applicable rules deny wins
// over require_approval, which wins over allow, and between rules of the same
// action the first decides. With none applicable, p.DefaultAction decides.
// history is the wallet's reserved spends; only those inside a criterion's
// window (At after now minus the window) count. An intent the engine cannot
// judge (unknown operation, negative amount) is denied rather than let
// through to the default.
func Evaluate(p Policy, in Intent, history []Spend, now time.Time) Decision {
	if !isOperation(in.Operation) {
		return Decision{Action: ActionDeny, Reason: fmt.Sprintf("unknown operation %q", in.Operation)}
	}
	if in.Amount != nil && in.Amount.Sign() < 0 {
		return Decision{Action: ActionDeny, Reason: "negative amount"}
	}
	best, bestReasons := -1, []string(nil)
	for i, r := range p.Rules {
		if r.Operation != in.Operation {
			continue
		}
		reasons, ok := matchAll(r.Criteria, in, history, now)
		if !ok {
			continue
		}
		if best < 0 || precedence[r.Action] > precedence[p.Rules[best].Action] {
			best, bestReasons = i, reasons
		}
	}
	if best < 0 {
		return Decision{
			Action: p.DefaultAction,
			Reason: fmt.Sprintf("no rule applies to this %s; default action %s", in.Operation, p.DefaultAction),
		}
	}
	r := p.Rules[best]
	why := "every " + r.Operation + " (no criteria)"
	if len(bestReasons) > 0 {
		why = strings.Join(bestReasons, "; ")
	}
	idx := best
	return Decision{
		Action:    r.Action,
		RuleIndex: &idx,
		Reason:    fmt.Sprintf("rule %d (%s %s): %s", best, r.Action, r.Operation, why),
	}
}

// matchAll reports whether every criterion matches, with a reason per
// criterion when they all do.
func matchAll(cs []Criterion, in Intent, history []Spend, now time.Time) ([]string, bool) {
	reasons := make([]string, 0, len(cs))
	for _, c := range cs {
		reason, ok := match(c, in, history, now)
		if !ok {
			return nil, false
		}
		reasons = append(reasons, reason)
	}
	return reasons, true
}

func match(c Criterion, in Intent, history []Spend, now time.Time) (string, bool) {
	switch c.Type {
	case CriterionRecipient:
		return matchList("recipient "+in.Recipient.Hex(), c.Op, containsAddress(c.Addresses, in.Recipient))
	case CriterionContract:
		return matchList("contract "+in.To.Hex(), c.Op, containsAddress(c.Addresses, in.To))
	case CriterionSignatureType:
		found := false
		for _, t := range c.SignatureTypes {
			found = found || t == in.SignatureType
		}
		return matchList("signature type "+in.SignatureType, c.Op, found)
	case CriterionValue:
		limit, ok := parseAmount(c.Amount)
		if !ok || !strings.EqualFold(c.Asset, in.Asset) {
			return "", false
		}
		amount := amountOf(in.Amount)
		cmp := amount.Cmp(limit)
		var holds bool
		switch c.Op {
		case OpLTE:
			holds = cmp <= 0
		case OpLT:
			holds = cmp < 0
		case OpGTE:
			holds = cmp >= 0
		case OpGT:
			holds = cmp > 0
		case OpEQ:
			holds = cmp == 0
		}
		return fmt.Sprintf("%s amount %s %s %s", in.Asset, amount, c.Op, c.Amount), holds
	case CriterionRollingTotal:
		limit, ok := parseAmount(c.Max)
		if !ok || !strings.EqualFold(c.Asset, in.Asset) {
			return "", false
		}
		window := time.Duration(c.WindowSeconds) * time.Second
		total := RollingTotal(history, c.Asset, now.Add(-window))
		total.Add(total, amountOf(in.Amount))
		return fmt.Sprintf("%s total over %ds would be %s, above max %s", in.Asset, c.WindowSeconds, total, c.Max),
			total.Cmp(limit) > 0
	}
	return "", false
}

// RollingTotal is the sum of history's spends of asset made after since.
func RollingTotal(history []Spend, asset string, since time.Time) *big.Int {
	total := new(big.Int)
	for _, s := range history {
		if s.Amount != nil && strings.EqualFold(s.Asset, asset) && s.At.After(since) {
			total.Add(total, s.Amount)
		}
	}
	return total
}

func matchList(subject, op string, found bool) (string, bool) {
	switch op {
	case OpIn:
		return subject + " is in the list", found
	case OpNotIn:
		return subject + " is not in the list", !found
	}
	return "", false
}

func containsAddress(list []string, a common.Address) bool {
	for _, s := range list {
		if common.IsHexAddress(s) && common.HexToAddress(s) == a {
			return true
		}
	}
	return false
}

func amountOf(a *big.Int) *big.Int {
	if a == nil {
		return new(big.Int)
	}
	return a
}

func isOperation(op string) bool {
	return op == OpTransactionsCreate || op == OpSignaturesCreate || op == OpSwapsExecute
}
