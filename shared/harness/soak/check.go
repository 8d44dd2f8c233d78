// Package soak is a seeded, fault-injecting model of the platform: a
// history of what a client sent and was answered, the state read back
// after the run, and a checker that judges the pair against the
// invariants every run must keep, each by name, so that a failure names
// the rule it broke and the seed replays it.
package soak

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	"platformapi/shared/domain/audit"
)

// Record is one attempt of one request, as the client saw it.
type Record struct {
	Op, Method, Path string
	KeyID            string // the key that made the request
	Idem             string // its Idempotency-Key, "" for none
	Sent, Answered   time.Time
	Status           int    // 0: no answer (the server died or the client gave up)
	RequestID        string // X-Request-Id of the answer
	Code             string // the problem's code, "" on success
	// Unchanged is an answer saying nothing changed (a 503 retryable
	// refusal, a 409 lost race): the request must have had no effect.
	Unchanged bool
	Timeout   time.Duration // how long the server may take
	// Decision: an approval decided (2xx) by KeyID, requested by Requester.
	Requester string
	// Payment is the x402 authorization (its nonce) a top-up attempt
	// carried, "" for none.
	Payment string
	// Made is what a successful answer names: the id of what it created,
	// a top-up's receipt.
	Made string
}

// Key is one key of the model: its parent and the key it was rolled from.
type Key struct{ ID, Parent, RolledFrom string }

// Entry is one ledger entry as listed, newest first.
type Entry struct {
	ID, Type, Reference, RequestID string
	Operation, KeyID               string
	At                             time.Time
	Amount, BalanceAfter           int64
}

// funding is an entry that adds credits from outside.
func (e Entry) funding() bool { return e.Type == "grant" || e.Type == "top_up" }

// AuditEvent is one listed audit event.
type AuditEvent struct {
	RequestID, KeyID, Operation string
	ChargedMicro                int64
}

// settlement is an event no request made: a hold settled later (a send
// confirmed, an order filled, a hold swept), reported to the request that
// took the hold.
func (e AuditEvent) settlement() bool { return slices.Contains(audit.Settlements, e.Operation) }

// Delivery is one webhook delivery the receiver took.
type Delivery struct{ EventID, Event, Subject string }

// Effect counts what an Idempotency-Key produced once the run is over:
// resources named after it, debits its answered attempts' requests made,
// top-ups credited by it. Creates says its operation makes one resource
// named after it when it succeeds; Funds that it credits the account once
// when it succeeds.
type Effect struct {
	Resources, Debits, Credits int
	Creates, Funds             bool
}

// Send is one wallet send of the model to an address of its own, with
// what the API lists for it and what the chain holds at that address.
type Send struct {
	Idem   string
	Status string // its transaction's status as listed; "" when none is
	Listed int    // transactions the wallet lists to its address
	// Amount is what the send moves and Received the address's balance
	// on the chain, in base units (decimal).
	Amount, Received string
}

// State is what the checker reads after the run.
type State struct {
	// Balance and Entries are read once every hold's deadline and grace
	// are past: every hold must have ended.
	Balance       int64
	Entries       []Entry
	Audit         []AuditEvent
	AuditListedAt time.Time // events of requests sent before this are listed
	UsageMicro    int64     // what /usage counts as charged
	// NoUsage: the server rolls no usage up (the local server on the AWS
	// backend leaves that to the table's stream, which nothing reads).
	NoUsage    bool
	Deliveries []Delivery
	// Committed is subject (resource id) → the events its committed
	// writes announce, each due under exactly one event id; Passing the
	// events it may have announced on its way (a send queued, then
	// submitted, before it confirmed), each under at most one.
	Committed, Passing map[string][]string
	// Unnamed is event → how many committed writes announce it with no
	// subject to tell them apart (service.invoked): so many event ids.
	Unnamed map[string]int
	Effects map[string]Effect // Idempotency-Key → what it did
	// Waiting are the requests whose hold may still be held: a send or a
	// swap that waits for its approval keeps its hold until then.
	Waiting map[string]bool
	// PaymentCredits is x402 authorization (its nonce) → the top-ups
	// that credited it.
	PaymentCredits map[string]int
	Sends          []Send
	Keys           []Key
	MaxRSSBytes    int64
	RSSBoundBytes  int64
}

// Verdict is one invariant's outcome; Violations is empty when it held.
type Verdict struct {
	Name       string
	Violations []string
}

// OK reports whether the invariant held.
func (v Verdict) OK() bool { return len(v.Violations) == 0 }

// Invariants are the checks, in the order they are reported.
var Invariants = []struct {
	Name  string
	Check func([]Record, State) []string
}{
	{"money", checkMoney},
	{"charges-audited", checkChargesAudited},
	{"audit", checkAudit},
	{"events", checkEvents},
	{"approvals", checkApprovals},
	{"truthful-errors", checkTruthful},
	{"bounds", checkBounds},
	{"chain", checkChain},
}

// Check judges a run: one verdict per invariant.
func Check(h []Record, s State) []Verdict {
	out := make([]Verdict, 0, len(Invariants))
	for _, inv := range Invariants {
		out = append(out, Verdict{Name: inv.Name, Violations: inv.Check(h, s)})
	}
	return out
}

// checkMoney: the balance is the sum of the ledger (top-ups included) and
// never negative, no Idempotency-Key of a key is charged twice (its dead
// attempts' debits included: doubleCharges), no top-up is credited twice
// for one Idempotency-Key or one payment, no hold is taken twice and every
// hold has ended (the state is read past every deadline and its grace).
func checkMoney(h []Record, s State) []string {
	var v []string
	var sum, funded int64
	held, ended := map[string]int{}, map[string]int{}
	holder, operation := map[string]string{}, map[string]string{} // hold → the request that took it, its operation
	for _, e := range s.Entries {
		sum += e.Amount
		if e.funding() {
			funded += e.Amount
		}
		if e.BalanceAfter < 0 {
			v = append(v, fmt.Sprintf("ledger entry %s leaves the balance at %d", e.ID, e.BalanceAfter))
		}
		switch e.Type {
		case "hold":
			held[e.Reference]++
			holder[e.Reference], operation[e.Reference] = e.RequestID, e.Operation
		case "capture", "release":
			ended[e.Reference]++
		}
	}
	if sum != s.Balance {
		v = append(v, fmt.Sprintf("the ledger sums to %d; the balance is %d", sum, s.Balance))
	}
	if len(s.Entries) > 0 && s.Entries[0].BalanceAfter != s.Balance {
		v = append(v, fmt.Sprintf("the newest entry leaves %d; the balance is %d", s.Entries[0].BalanceAfter, s.Balance))
	}
	if s.Balance < 0 {
		v = append(v, fmt.Sprintf("the balance is %d", s.Balance))
	}
	v = append(v, doubleCharges(h, s.Entries)...)
	for _, idem := range sortedKeys(s.Effects) {
		if n := s.Effects[idem].Credits; n > 1 {
			v = append(v, fmt.Sprintf("Idempotency-Key %s credited %d top-ups", idem, n))
		}
	}
	for _, p := range sortedKeys(s.PaymentCredits) {
		if n := s.PaymentCredits[p]; n > 1 {
			v = append(v, fmt.Sprintf("payment %s credited %d times", p, n))
		}
	}
	for _, ref := range sortedKeys(held) {
		switch {
		case held[ref] > 1:
			v = append(v, fmt.Sprintf("hold %s taken %d times", ref, held[ref]))
		case ended[ref] == 0 && !s.Waiting[holder[ref]]:
			v = append(v, fmt.Sprintf("hold %s of %s never ended (%s)", ref, operation[ref], describe(h, holder[ref])))
		}
	}
	return v
}

// call is what "charged at most once" counts by: one Idempotency-Key as
// one key sent it, whichever of its attempts' requests took the debit.
type call struct{ KeyID, Idem string }

// doubleCharges names the calls charged more than once. A debit is a
// charge, or a hold not given back in full (a dead attempt's hold the
// sweep released, and the retry's own, charge once). A debit of a request
// an answer names counts for that answer's call. A debit of a request no
// answer names was made by an attempt that died: it counts for a call of
// its key with an attempt in flight and unanswered when the debit was
// made. The kill that ends one attempt ends every attempt in flight, so
// such a debit may have several candidates: the debits are matched to
// candidates each of which may take one charge less those its answers
// took, and a debit no matching can place is a call charged twice, the
// double debit that a dead attempt and its retry split between two
// request ids.
func doubleCharges(h []Record, entries []Entry) []string {
	var v []string
	given := map[string]int64{} // hold → what its releases gave back
	for _, e := range entries {
		if e.Type == "release" {
			given[e.Reference] += e.Amount
		}
	}
	heard := map[string]call{}
	known := map[string]bool{}
	for _, r := range h {
		if r.RequestID != "" {
			known[r.RequestID] = true
			if r.Idem != "" {
				heard[r.RequestID] = call{r.KeyID, r.Idem}
			}
		}
	}
	charged := map[call]int{}
	var dead []Entry
	for _, e := range entries {
		switch {
		case e.Amount >= 0 || e.Type != "charge" && e.Type != "hold" || e.Type == "hold" && given[e.Reference] >= -e.Amount:
		case known[e.RequestID]:
			if c, ok := heard[e.RequestID]; ok {
				charged[c]++
			}
		default:
			dead = append(dead, e)
		}
	}
	calls := make([]call, 0, len(charged))
	for c := range charged {
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b call) int { return strings.Compare(a.KeyID+" "+a.Idem, b.KeyID+" "+b.Idem) })
	for _, c := range calls {
		if n := charged[c]; n > 1 {
			v = append(v, fmt.Sprintf("Idempotency-Key %s of key %s charged %d times", c.Idem, c.KeyID, n))
		}
	}
	candidates := make([][]call, len(dead))
	for i, e := range dead {
		for _, r := range h {
			c := call{r.KeyID, r.Idem}
			if r.Status == 0 && r.Idem != "" && r.KeyID == e.KeyID && inFlight(r, e.At) && !slices.Contains(candidates[i], c) {
				candidates[i] = append(candidates[i], c)
			}
		}
	}
	// Kuhn's augmenting paths: holder[c] is the dead debit placed on c.
	holder := map[call]int{}
	var place func(i int, seen map[call]bool) bool
	place = func(i int, seen map[call]bool) bool {
		for _, c := range candidates[i] {
			if seen[c] || charged[c] > 0 {
				continue
			}
			seen[c] = true
			if j, taken := holder[c]; !taken || place(j, seen) {
				holder[c] = i
				return true
			}
		}
		return false
	}
	for i, e := range dead {
		if len(candidates[i]) > 0 && !place(i, map[call]bool{}) {
			names := make([]string, len(candidates[i]))
			for k, c := range candidates[i] {
				names[k] = c.Idem
			}
			v = append(v, fmt.Sprintf("%s %s of %s (request %s, which no answer names) charged key %s's Idempotency-Key %s a second time",
				e.Type, e.Reference, e.Operation, e.RequestID, e.KeyID, strings.Join(names, " or ")))
		}
	}
	return v
}

// inFlight: r was on its way when something happened at at (a ledger
// entry's time, written to the millisecond).
func inFlight(r Record, at time.Time) bool {
	return !at.Before(r.Sent.Truncate(time.Millisecond)) && !at.After(r.Answered)
}

// checkChargesAudited: what the audit events charged, what /usage counts
// and what the ledger spent agree, and each captured hold's charge is
// carried by the audit event of the request that captured it.
func checkChargesAudited(h []Record, s State) []string {
	var funded, audited int64
	for _, e := range s.Entries {
		if e.funding() {
			funded += e.Amount
		}
	}
	for _, e := range s.Audit {
		audited += e.ChargedMicro
	}
	usage := s.UsageMicro
	if s.NoUsage {
		usage = audited
	}
	if spent := funded - s.Balance; audited != spent || usage != spent {
		return append([]string{fmt.Sprintf("audit events charged %d, /usage counts %d, the ledger spent %d", audited, s.UsageMicro, spent)}, byRequest(h, s)...)
	}
	return nil
}

// byRequest names the requests whose audit events carry another charge
// than their ledger entries: where to look when the sums disagree. A
// retry that took a dead attempt's hold over carries that attempt's
// charge, so a pair of names here is a lead, not a verdict.
func byRequest(h []Record, s State) []string {
	idemOf := map[string]string{}
	attempts := map[string][]string{}
	for _, r := range h {
		if r.Idem == "" {
			continue
		}
		idemOf[r.RequestID] = r.Idem
		attempts[r.Idem] = append(attempts[r.Idem], fmt.Sprintf("%d %s%s", r.Status, r.RequestID, r.Code))
	}
	ledger, audited := map[string]int64{}, map[string]int64{}
	ops := map[string][]string{} // request → the operations of its entries and events
	for _, e := range s.Entries {
		if !e.funding() {
			ledger[e.RequestID] -= e.Amount
			if !slices.Contains(ops[e.RequestID], e.Operation) && e.Operation != "" {
				ops[e.RequestID] = append(ops[e.RequestID], e.Operation)
			}
		}
	}
	for _, e := range s.Audit {
		audited[e.RequestID] += e.ChargedMicro
		if !slices.Contains(ops[e.RequestID], e.Operation) && e.Operation != "" {
			ops[e.RequestID] = append(ops[e.RequestID], e.Operation)
		}
	}
	seen := map[string]bool{}
	var v []string
	for _, m := range []map[string]int64{ledger, audited} {
		for _, req := range sortedKeys(m) {
			if !seen[req] && ledger[req] != audited[req] {
				line := fmt.Sprintf("%s: the ledger %d, its audit events %d", req, ledger[req], audited[req])
				if idem, ok := idemOf[req]; ok {
					line += fmt.Sprintf(" (%s, attempts: %s)", idem, strings.Join(attempts[idem], ", "))
				} else if len(ops[req]) > 0 {
					line += fmt.Sprintf(" (an attempt never answered; %s)", strings.Join(ops[req], ", "))
				}
				v = append(v, line)
			}
			seen[req] = true
		}
	}
	return v
}

// checkAudit: every answered request sent before the listing has exactly
// one audit event, and an event that no answer names belongs to a request
// that was sent but never answered (a killed process), never to nothing.
func checkAudit(h []Record, s State) []string {
	var v []string
	byReq := map[string]int{}
	for _, e := range s.Audit {
		if !e.settlement() {
			byReq[e.RequestID]++
		}
	}
	answered := map[string]bool{}
	unanswered := map[string]int{} // key → attempts without an answer
	for _, r := range h {
		if r.Status == 0 {
			unanswered[r.KeyID]++
			continue
		}
		if r.RequestID == "" || r.KeyID == "" || r.Status == 401 || !r.Sent.Before(s.AuditListedAt) {
			continue
		}
		answered[r.RequestID] = true
		if n := byReq[r.RequestID]; n != 1 {
			v = append(v, fmt.Sprintf("%s %s %s (%s, answered %d): %d audit events", r.Op, r.Method, r.Path, r.RequestID, r.Status, n))
		}
	}
	orphans := map[string]int{}
	for _, e := range s.Audit {
		if !answered[e.RequestID] && !e.settlement() {
			orphans[e.KeyID]++
		}
	}
	for _, k := range sortedKeys(orphans) {
		if orphans[k] > unanswered[k] {
			v = append(v, fmt.Sprintf("key %s: %d audit events of no answered request, %d requests unanswered", k, orphans[k], unanswered[k]))
		}
	}
	return v
}

// checkEvents: every event a committed write announces reached the
// receiver under exactly one event id, an event a resource may have
// passed through under at most one, and no event names a write that did
// not commit. A delivery repeated under the same id is what
// at-least-once delivery allows after a crash between the send and its
// record: receivers deduplicate by id.
func checkEvents(h []Record, s State) []string {
	var v []string
	type announced struct{ subject, event string }
	ids := map[announced][]string{}
	for _, d := range s.Deliveries {
		a := announced{d.Subject, d.Event}
		if !slices.Contains(ids[a], d.EventID) {
			ids[a] = append(ids[a], d.EventID)
		}
		if _, unnamed := s.Unnamed[d.Event]; unnamed && d.Subject == "" {
			continue
		}
		if !slices.Contains(s.Committed[d.Subject], d.Event) && !slices.Contains(s.Passing[d.Subject], d.Event) {
			v = append(v, fmt.Sprintf("event %s (%s) for %s, which no committed write announces", d.EventID, d.Event, d.Subject))
		}
	}
	for _, subj := range sortedKeys(s.Committed) {
		for _, ev := range s.Committed[subj] {
			if n := len(ids[announced{subj, ev}]); n != 1 {
				v = append(v, fmt.Sprintf("%s of %s: %d event ids; want 1%s", ev, subj, n, madeBy(h, subj)))
			}
		}
	}
	for _, ev := range sortedKeys(s.Unnamed) {
		if n := len(ids[announced{"", ev}]); n != s.Unnamed[ev] {
			v = append(v, fmt.Sprintf("%s: %d event ids for %d committed writes", ev, n, s.Unnamed[ev]))
		}
	}
	for _, subj := range sortedKeys(s.Passing) {
		for _, ev := range s.Passing[subj] {
			if n := len(ids[announced{subj, ev}]); n > 1 && !slices.Contains(s.Committed[subj], ev) {
				v = append(v, fmt.Sprintf("%s of %s: %d event ids; want at most 1", ev, subj, n))
			}
		}
	}
	return v
}

// madeBy names the Idempotency-Key whose answer named subject, with its
// attempts (status and request id; 0: no answer): where to look.
func madeBy(h []Record, subject string) string {
	idem := ""
	for _, r := range h {
		if r.Made == subject && r.Idem != "" {
			idem = r.Idem
		}
	}
	if idem == "" {
		return ""
	}
	var attempts []string
	for _, r := range h {
		if r.Idem == idem {
			attempts = append(attempts, fmt.Sprintf("%d %s", r.Status, r.RequestID))
		}
	}
	return fmt.Sprintf(" (%s, attempts: %s)", idem, strings.Join(attempts, ", "))
}

// describe names a request by its operation and Idempotency-Key.
func describe(h []Record, requestID string) string {
	for _, r := range h {
		if r.RequestID == requestID && requestID != "" {
			return fmt.Sprintf("%s %s, %s", r.Op, r.Idem, requestID)
		}
	}
	return "request " + requestID + ", not the client's"
}

// Lineage is the requesting key, its roll chain both ways, its ancestors
// and its descendants (of every key of that chain).
func Lineage(keys []Key, id string) map[string]bool {
	byID := map[string]Key{}
	for _, k := range keys {
		byID[k.ID] = k
	}
	chain := map[string]bool{id: true}
	for grew := true; grew; {
		grew = false
		for _, k := range keys {
			if k.RolledFrom != "" && chain[k.RolledFrom] != chain[k.ID] {
				chain[k.RolledFrom], chain[k.ID], grew = true, true, true
			}
		}
	}
	out := map[string]bool{}
	for c := range chain {
		out[c] = true
		for p := byID[c].Parent; p != ""; p = byID[p].Parent {
			out[p] = true
		}
	}
	for _, k := range keys {
		if isBelow(byID, k.ID, chain) {
			out[k.ID] = true
		}
	}
	return out
}

func isBelow(byID map[string]Key, id string, chain map[string]bool) bool {
	for p := byID[id].Parent; p != ""; p = byID[p].Parent {
		if chain[p] {
			return true
		}
	}
	return false
}

// checkApprovals: no approval was decided by a key of its requester's
// lineage.
func checkApprovals(h []Record, s State) []string {
	var v []string
	for _, r := range h {
		if r.Requester == "" || r.Status/100 != 2 {
			continue
		}
		if Lineage(s.Keys, r.Requester)[r.KeyID] {
			v = append(v, fmt.Sprintf("%s decided by %s, of the lineage of its requester %s", r.Path, r.KeyID, r.Requester))
		}
	}
	return v
}

// checkTruthful: an Idempotency-Key whose last answer said nothing changed
// changed nothing; one that succeeded did what it did once, and what it
// made (or the top-up it bought) is there.
func checkTruthful(h []Record, s State) []string {
	var v []string
	last := map[string]Record{}
	for _, r := range h {
		if r.Idem != "" && r.Status != 0 {
			last[r.Idem] = r
		}
	}
	for _, idem := range sortedKeys(last) {
		r, e := last[idem], s.Effects[idem]
		switch {
		case r.Unchanged && (e.Resources > 0 || e.Debits > 0 || e.Credits > 0):
			v = append(v, fmt.Sprintf("%s %s answered %d %s (nothing changed) yet made %d resources, %d debits and %d top-ups", r.Op, idem, r.Status, r.Code, e.Resources, e.Debits, e.Credits))
		case r.Status/100 == 2 && e.Resources > 1:
			v = append(v, fmt.Sprintf("%s %s made %d resources", r.Op, idem, e.Resources))
		case r.Status/100 == 2 && e.Creates && e.Resources == 0:
			v = append(v, fmt.Sprintf("%s %s answered %d, and what it made is gone", r.Op, idem, r.Status))
		case r.Status/100 == 2 && e.Funds && e.Credits == 0:
			v = append(v, fmt.Sprintf("%s %s answered %d, and credited nothing", r.Op, idem, r.Status))
		}
	}
	return v
}

// checkBounds: every request answered within its timeout plus a second,
// and the server's memory stayed under its bound.
func checkBounds(h []Record, s State) []string {
	var v []string
	for _, r := range h {
		if r.Status != 0 && r.Timeout > 0 {
			if took := r.Answered.Sub(r.Sent); took > r.Timeout+time.Second {
				v = append(v, fmt.Sprintf("%s %s answered %d after %s (timeout %s)", r.Method, r.Path, r.Status, took.Round(time.Millisecond), r.Timeout))
			}
		}
	}
	if s.RSSBoundBytes > 0 && s.MaxRSSBytes > s.RSSBoundBytes {
		v = append(v, fmt.Sprintf("server RSS reached %d bytes; bound %d", s.MaxRSSBytes, s.RSSBoundBytes))
	}
	return v
}

// checkChain: what the chain holds at each send's address is what the API
// says was sent there: its amount once the send confirmed, nothing while
// no transaction of it was broadcast, at most its amount while one is
// submitted. More is a send broadcast twice.
func checkChain(_ []Record, s State) []string {
	var v []string
	for _, sd := range s.Sends {
		amount, ok1 := new(big.Int).SetString(sd.Amount, 10)
		got, ok2 := new(big.Int).SetString(sd.Received, 10)
		if !ok1 || !ok2 {
			v = append(v, fmt.Sprintf("send %s: amount %q, received %q", sd.Idem, sd.Amount, sd.Received))
			continue
		}
		switch {
		case sd.Listed > 1:
			v = append(v, fmt.Sprintf("send %s: %d transactions to its address", sd.Idem, sd.Listed))
		case sd.Status == "confirmed" && got.Cmp(amount) != 0,
			sd.Status == "submitted" && got.Sign() != 0 && got.Cmp(amount) != 0,
			sd.Status != "confirmed" && sd.Status != "submitted" && got.Sign() != 0:
			v = append(v, fmt.Sprintf("send %s (%s, %s): its address received %s on the chain", sd.Idem, orNone(sd.Status), sd.Amount, sd.Received))
		}
	}
	return v
}

func orNone(s string) string {
	if s == "" {
		return "no transaction"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
