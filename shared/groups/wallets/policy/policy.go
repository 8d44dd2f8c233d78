// Package policy is the managed-wallet policy engine (docs/wallets.md): the
// rule document a project attaches to a wallet, its
// validation, and the decision it gives for one intent (a transaction, a
// signature or a swap) against the wallet's recent spends. A signature whose
// EIP-712 message authorises a token transfer (a permit) is also decided as
// that transfer (EvaluateSignature), so signing cannot move what sending
// may not. It is pure: no
// store, no chain, no clock of its own. The caller supplies the spend history
// and the time, and is responsible for making "evaluate, then reserve the
// spend" atomic so that rolling totals stay exact under concurrency.
package policy

import (
	"fmt"
	"math/big"
	"slices"
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
	// EIP-712 domain criteria (signatures.create) and the chain (every
	// operation; a signature's is its domain's chainId).
	CriterionVerifyingContract = "verifyingContract"
	CriterionDomainName        = "domainName"
	CriterionChainID           = "chainId"
)

// Criterion operators: list membership for recipient, contract,
// signatureType, verifyingContract, domainName and chainId; comparisons for
// value.
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
	MaxListItems         = 100 // chainIds and names of one criterion
	MaxDomainNameLength  = 256
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
	Criteria  []Criterion `json:"criteria" maxItems:"10" doc:"At most 10 criteria, all of which must match for the rule to apply. An empty list matches every intent of the operation. recipient, contract, value, rollingTotal and chainId apply to transactions.create; contract, value, rollingTotal and chainId to swaps.execute; every type to signatures.create, where recipient, contract, value and rollingTotal match only a transfer-shaped EIP-712 message (a permit's spender, token and amount) and verifyingContract, domainName and chainId only a domain that has them"`
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
//   - verifyingContract {op: in|not_in, addresses}: an EIP-712 signature's
//     domain.verifyingContract.
//   - domainName {op: in|not_in, names}: an EIP-712 signature's domain.name,
//     compared exactly.
//   - chainId {op: in|not_in, chainIds}: the chain of a transaction or swap,
//     the domain.chainId of an EIP-712 signature.
//
// A criterion about something the intent does not have (the domain of a
// personal_sign, the recipient of a signature that moves nothing) matches
// neither in nor not_in: such rules speak only of intents that have it.
type Criterion struct {
	Type           string   `json:"type" enum:"recipient,contract,value,rollingTotal,signatureType,verifyingContract,domainName,chainId" doc:"recipient {op, addresses}; contract {op, addresses}; value {asset, op, amount}; rollingTotal {asset, windowSeconds, max}; signatureType {op, signatureTypes}; verifyingContract {op, addresses}; domainName {op, names}; chainId {op, chainIds}"`
	Op             string   `json:"op,omitempty" enum:"in,not_in,lte,lt,gte,gt,eq" doc:"in or not_in for recipient, contract, signatureType, verifyingContract, domainName and chainId; lte, lt, gte, gt or eq for value"`
	Addresses      []string `json:"addresses,omitempty" maxItems:"100" pattern:"^0x[0-9a-fA-F]{40}$" doc:"recipient, contract and verifyingContract: 1 to 100 addresses, compared case-insensitively"`
	Asset          string   `json:"asset,omitempty" maxLength:"32" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]*$" doc:"value and rollingTotal: the asset symbol (ETH, USDC, WETH), compared case-insensitively"`
	Amount         string   `json:"amount,omitempty" pattern:"^(0|[1-9][0-9]{0,77})$" doc:"value: decimal string of base units"`
	WindowSeconds  int64    `json:"windowSeconds,omitempty" minimum:"60" maximum:"2592000" doc:"rollingTotal: the window, 60 seconds to 30 days"`
	Max            string   `json:"max,omitempty" pattern:"^(0|[1-9][0-9]{0,77})$" doc:"rollingTotal: the largest total (decimal string of base units) the window may reach"`
	SignatureTypes []string `json:"signatureTypes,omitempty" enum:"personal_sign,eip712" doc:"signatureType: the signature types compared"`
	Names          []string `json:"names,omitempty" maxItems:"100" doc:"domainName: 1 to 100 EIP-712 domain names (1 to 256 characters), compared exactly"`
	ChainIDs       []uint64 `json:"chainIds,omitempty" maxItems:"100" doc:"chainId: 1 to 100 chain ids"`
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
	// ChainID is the chain of a transaction or swap, the EIP-712 domain's
	// chainId of a signature (0 when it has none).
	ChainID uint64
	// To is the address the transaction calls: the token contract for an
	// ERC-20 transfer, the router for a swap, the recipient for a native
	// transfer, the token of a signature's transfer.
	To common.Address
	// Recipient is who finally receives: the decoded ERC-20 transfer or
	// approve target (see DecodeERC20), or To for the native asset; a
	// signature's transfer's spender or payee.
	Recipient common.Address
	// Asset is the symbol of what is spent (ETH, USDC, WETH); "" for a
	// token the deployment does not know, which no value or rollingTotal
	// criterion can name.
	Asset string
	// Amount is in base units; nil for a signature that moves nothing.
	Amount        *big.Int
	SignatureType string
	// Domain is an EIP-712 signature's domain; nil otherwise.
	Domain *Domain
}

// Domain is an EIP-712 domain as the policy sees it.
type Domain struct {
	Name              string
	VerifyingContract *common.Address
}

// Transfer is a token movement a signed message authorises: a permit's
// allowance to a spender, a transfer authorisation to a payee.
type Transfer struct {
	Token     common.Address
	Recipient common.Address
	Asset     string // "" when the deployment does not know the token
	Amount    *big.Int
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

// EvaluateSignature decides a signature intent sig. With no transfers it
// is Evaluate. Otherwise each transfer the signed message authorises is
// decided twice, as the signature (its spender, token and amount seen by
// recipient, contract, value and rollingTotal) and as a transactions.create
// send of that token to that spender, with the transfers before it counted
// as spent now; the strictest decision of all wins (deny over
// require_approval over allow). A permit is a send that has not happened
// yet: the caps that stop the send stop the permit.
func EvaluateSignature(p Policy, sig Intent, transfers []Transfer, history []Spend, now time.Time) Decision {
	if len(transfers) == 0 {
		return Evaluate(p, sig, history, now)
	}
	h := append([]Spend(nil), history...)
	var worst *Decision
	for _, t := range transfers {
		in := sig
		in.To, in.Recipient, in.Asset, in.Amount = t.Token, t.Recipient, t.Asset, t.Amount
		send := Intent{Operation: OpTransactionsCreate, ChainID: sig.ChainID, To: t.Token, Recipient: t.Recipient, Asset: t.Asset, Amount: t.Amount}
		asSend := Evaluate(p, send, h, now)
		what := t.Asset
		if what == "" {
			what = "of token " + t.Token.Hex()
		}
		asSend.Reason = fmt.Sprintf("as a send of %s %s to %s: %s", amountOf(t.Amount), what, t.Recipient.Hex(), asSend.Reason)
		for _, d := range []Decision{Evaluate(p, in, h, now), asSend} {
			if worst == nil || precedence[d.Action] > precedence[worst.Action] {
				worst = &d
			}
		}
		if t.Asset != "" {
			h = append(h, Spend{Asset: t.Asset, Amount: amountOf(t.Amount), At: now})
		}
	}
	return *worst
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
		if in.Operation == OpSignaturesCreate && in.Amount == nil {
			return "", false
		}
		return matchList("recipient "+in.Recipient.Hex(), c.Op, containsAddress(c.Addresses, in.Recipient))
	case CriterionContract:
		if in.Operation == OpSignaturesCreate && in.Amount == nil {
			return "", false
		}
		return matchList("contract "+in.To.Hex(), c.Op, containsAddress(c.Addresses, in.To))
	case CriterionVerifyingContract:
		if in.Domain == nil || in.Domain.VerifyingContract == nil {
			return "", false
		}
		vc := *in.Domain.VerifyingContract
		return matchList("verifying contract "+vc.Hex(), c.Op, containsAddress(c.Addresses, vc))
	case CriterionDomainName:
		if in.Domain == nil || in.Domain.Name == "" {
			return "", false
		}
		return matchList(fmt.Sprintf("domain name %q", in.Domain.Name), c.Op, slices.Contains(c.Names, in.Domain.Name))
	case CriterionChainID:
		if in.ChainID == 0 {
			return "", false
		}
		return matchList(fmt.Sprintf("chain %d", in.ChainID), c.Op, slices.Contains(c.ChainIDs, in.ChainID))
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
