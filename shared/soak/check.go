// Package soak is a seeded, fault-injecting model of the platform: a
// history of what a client sent and was answered, the state read back
// after the run, and a checker that judges the pair against the
// invariants every run must keep, each by name, so that a failure names
// the rule it broke and the seed replays it.
package soak

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
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
}

// Key is one key of the model: its parent and the key it was rolled from.
type Key struct{ ID, Parent, RolledFrom string }

// Entry is one ledger entry as listed, newest first.
type Entry struct {
	ID, Type, Reference, RequestID string
	Amount, BalanceAfter           int64
}

// funding is an entry that adds credits from outside.
func (e Entry) funding() bool { return e.Type == "grant" || e.Type == "top_up" }

// AuditEvent is one listed audit event.
type AuditEvent struct {
	RequestID, KeyID string
	ChargedMicro     int64
}

// Delivery is one webhook delivery the receiver took.
type Delivery struct{ EventID, Event, Subject string }

// Effect counts what an Idempotency-Key produced once the run is over:
// resources named after it, charges taken for it. Creates says its
// operation makes one resource named after it when it succeeds.
type Effect struct {
	Resources, Charges int
	Creates            bool
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
	NoUsage       bool
	Deliveries    []Delivery
	Committed     map[string]string // subject (resource id) → the event its write announces
	Effects       map[string]Effect // Idempotency-Key → what it did
	Keys          []Key
	MaxRSSBytes   int64
	RSSBoundBytes int64
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
}

// Check judges a run: one verdict per invariant.
func Check(h []Record, s State) []Verdict {
	out := make([]Verdict, 0, len(Invariants))
	for _, inv := range Invariants {
		out = append(out, Verdict{Name: inv.Name, Violations: inv.Check(h, s)})
	}
	return out
}

// checkMoney: the balance is the sum of the ledger and never negative, no
// Idempotency-Key is charged twice, no hold is taken twice and every hold
// has ended (the state is read past every deadline and its grace).
func checkMoney(_ []Record, s State) []string {
	var v []string
	var sum, funded int64
	held, ended := map[string]int{}, map[string]int{}
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
	for _, idem := range sortedKeys(s.Effects) {
		if n := s.Effects[idem].Charges; n > 1 {
			v = append(v, fmt.Sprintf("Idempotency-Key %s charged %d times", idem, n))
		}
	}
	for _, ref := range sortedKeys(held) {
		switch {
		case held[ref] > 1:
			v = append(v, fmt.Sprintf("hold %s taken %d times", ref, held[ref]))
		case ended[ref] == 0:
			v = append(v, fmt.Sprintf("hold %s never ended", ref))
		}
	}
	return v
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
	for _, e := range s.Entries {
		if !e.funding() {
			ledger[e.RequestID] -= e.Amount
		}
	}
	for _, e := range s.Audit {
		audited[e.RequestID] += e.ChargedMicro
	}
	seen := map[string]bool{}
	var v []string
	for _, m := range []map[string]int64{ledger, audited} {
		for _, req := range sortedKeys(m) {
			if !seen[req] && ledger[req] != audited[req] {
				line := fmt.Sprintf("%s: the ledger %d, its audit events %d", req, ledger[req], audited[req])
				if idem, ok := idemOf[req]; ok {
					line += fmt.Sprintf(" (%s, attempts: %s)", idem, strings.Join(attempts[idem], ", "))
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
		byReq[e.RequestID]++
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
		if !answered[e.RequestID] {
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

// checkEvents: every committed write's event reached the receiver under
// exactly one event id, and no event names a write that did not commit. A
// delivery repeated under the same id is what at-least-once delivery
// allows after a crash between the send and its record: receivers
// deduplicate by id.
func checkEvents(_ []Record, s State) []string {
	var v []string
	ids := map[string][]string{}
	for _, d := range s.Deliveries {
		if !slices.Contains(ids[d.Subject], d.EventID) {
			ids[d.Subject] = append(ids[d.Subject], d.EventID)
		}
		if ev, ok := s.Committed[d.Subject]; !ok || ev != d.Event {
			v = append(v, fmt.Sprintf("event %s (%s) for %s, which no committed write announces", d.EventID, d.Event, d.Subject))
		}
	}
	for _, subj := range sortedKeys(s.Committed) {
		if n := len(ids[subj]); n != 1 {
			v = append(v, fmt.Sprintf("%s of %s: %d event ids; want 1", s.Committed[subj], subj, n))
		}
	}
	return v
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
// made is there.
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
		case r.Unchanged && (e.Resources > 0 || e.Charges > 0):
			v = append(v, fmt.Sprintf("%s %s answered %d %s (nothing changed) yet made %d resources and %d charges", r.Op, idem, r.Status, r.Code, e.Resources, e.Charges))
		case r.Status/100 == 2 && e.Resources > 1:
			v = append(v, fmt.Sprintf("%s %s made %d resources", r.Op, idem, e.Resources))
		case r.Status/100 == 2 && e.Creates && e.Resources == 0:
			v = append(v, fmt.Sprintf("%s %s answered %d, and what it made is gone", r.Op, idem, r.Status))
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
