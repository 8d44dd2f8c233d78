package soak

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// clean is a run that keeps every invariant: one key charged once, its
// event delivered once, its request audited once; one top-up credited
// once for its payment; one send confirmed, its amount on the chain.
func clean() ([]Record, State) {
	h := []Record{{Op: "invoke", Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", KeyID: "k1", Idem: "i1",
		Sent: t0, Answered: t0.Add(time.Second), Status: 200, RequestID: "req_1", Timeout: 4 * time.Second},
		{Op: "topup", Method: "POST", Path: "/v1/credits/x402/top-up", KeyID: "k1", Idem: "t1",
			Sent: t0, Answered: t0.Add(time.Second), Status: 402, RequestID: "req_2", Code: "payment_required", Unchanged: true, Timeout: 4 * time.Second},
		{Op: "topup", Method: "POST", Path: "/v1/credits/x402/top-up", KeyID: "k1", Idem: "t1", Payment: "0xn1",
			Sent: t0, Answered: t0.Add(time.Second), Status: 200, RequestID: "req_3", Made: "rcpt_1", Timeout: 4 * time.Second},
		{Op: "send", Method: "POST", Path: "/v1/wallets/wal_1/transactions", KeyID: "k1", Idem: "s1",
			Sent: t0, Answered: t0.Add(time.Second), Status: 202, RequestID: "req_4", Made: "wtx_1", Timeout: 4 * time.Second},
	}
	s := State{
		Balance: 580, Entries: []Entry{
			{ID: "led_6", Type: "capture", Reference: "hld_2", RequestID: "req_w", BalanceAfter: 580},
			{ID: "led_5", Type: "hold", Reference: "hld_2", RequestID: "req_4", Operation: "wallets.transactions.create", Amount: -10, BalanceAfter: 580},
			{ID: "led_4", Type: "top_up", Reference: "rcpt_1", RequestID: "req_3", Amount: 500, BalanceAfter: 590},
			{ID: "led_3", Type: "capture", Reference: "hld_1", RequestID: "req_1", BalanceAfter: 90},
			{ID: "led_2", Type: "hold", Reference: "hld_1", RequestID: "req_1", Amount: -10, BalanceAfter: 90},
			{ID: "led_1", Type: "grant", Amount: 100, BalanceAfter: 100},
		},
		Audit: []AuditEvent{{RequestID: "req_1", KeyID: "k1", ChargedMicro: 10}, {RequestID: "req_2", KeyID: "k1"}, {RequestID: "req_3", KeyID: "k1"},
			{RequestID: "req_4", KeyID: "k1", ChargedMicro: 10}, {RequestID: "req_4", KeyID: "k1", Operation: "wallets.transactions.confirm"}},
		AuditListedAt: t0.Add(30 * time.Second), UsageMicro: 20,
		Deliveries: []Delivery{{EventID: "evt_1", Event: "service.invoked", Subject: "i1"}, {EventID: "evt_2", Event: "credits.topped_up", Subject: "rcpt_1"},
			{EventID: "evt_3", Event: "wallet.transaction.queued", Subject: "wtx_1"}, {EventID: "evt_4", Event: "wallet.transaction.confirmed", Subject: "wtx_1"}},
		Committed: map[string][]string{"i1": {"service.invoked"}, "rcpt_1": {"credits.topped_up"}, "wtx_1": {"wallet.transaction.confirmed"}},
		Passing:   map[string][]string{"wtx_1": {"wallet.transaction.queued", "wallet.transaction.submitted"}},
		Effects: map[string]Effect{"i1": {Resources: 1, Debits: 1}, "t1": {Credits: 1, Funds: true},
			"s1": {Resources: 1, Debits: 1, Creates: true}},
		PaymentCredits: map[string]int{"0xn1": 1},
		Sends:          []Send{{Idem: "s1", Status: "confirmed", Listed: 1, Amount: "1000001", Received: "1000001"}},
		Keys:           []Key{{ID: "k1"}}, MaxRSSBytes: 100 << 20, RSSBoundBytes: 1 << 30,
	}
	return h, s
}

func TestACleanRunKeepsEveryInvariant(t *testing.T) {
	h, s := clean()
	for _, v := range Check(h, s) {
		if !v.OK() {
			t.Errorf("%s: %v", v.Name, v.Violations)
		}
	}
}

// Each invariant is shown to fail: a history or state broken on purpose is
// reported under that invariant's name, and no other.
func TestTheCheckerReportsEachBrokenInvariantByName(t *testing.T) {
	for _, tc := range []struct {
		name, invariant, want string
		breakIt               func(h []Record, s *State) []Record
	}{
		{"balance not the ledger's sum", "money", "sums to", func(h []Record, s *State) []Record {
			s.Entries[1].Amount = -5
			return h
		}},
		{"negative balance", "money", "leaves the balance at -", func(h []Record, s *State) []Record { s.Entries[1].BalanceAfter = -1; return h }},
		{"a key charged twice", "money", "Idempotency-Key i1 of key k1 charged 2 times", func(h []Record, s *State) []Record {
			s.Entries = append([]Entry{{ID: "led_8", Type: "capture", Reference: "hld_9", RequestID: "req_1", BalanceAfter: 570},
				{ID: "led_7", Type: "hold", Reference: "hld_9", RequestID: "req_1", Operation: "services.invoke", KeyID: "k1", Amount: -10, BalanceAfter: 570}}, s.Entries...)
			s.Balance = 570
			return h
		}},
		{"a retry's hold taken again by its dead attempt", "money", "hold hld_3 of wallets.transactions.create (request req_dead, which no answer names) charged key k1's Idempotency-Key s1 a second time",
			func(h []Record, s *State) []Record { return chargedByItsDeadAttempt(h, s, 0) }},
		{"a hold never ended", "money", "hld_2 of wallets.transactions.create never ended", func(h []Record, s *State) []Record { s.Entries = s.Entries[1:]; return h }},
		{"a call's hold taken twice", "money", "hld_1 taken 2 times", func(h []Record, s *State) []Record {
			s.Entries = append([]Entry{{ID: "led_4", Type: "hold", Reference: "hld_1", RequestID: "req_2", Amount: -10, BalanceAfter: 80}}, s.Entries...)
			s.Balance = 80
			return h
		}},
		{"the newest entry disagrees with the balance", "money", "the newest entry leaves", func(h []Record, s *State) []Record {
			s.Entries[0].BalanceAfter = 91
			return h
		}},
		{"a top-up credited twice for one Idempotency-Key", "money", "t1 credited 2 top-ups", func(h []Record, s *State) []Record {
			s.Effects["t1"] = Effect{Credits: 2, Funds: true}
			return h
		}},
		{"one payment credited twice", "money", "payment 0xn1 credited 2 times", func(h []Record, s *State) []Record {
			s.PaymentCredits["0xn1"] = 2
			return h
		}},
		{"a top-up the ledger does not hold", "money", "the ledger sums to", func(h []Record, s *State) []Record {
			s.Entries = append(s.Entries[:2], s.Entries[3:]...)
			return h
		}},
		{"a paid top-up credited nothing", "truthful-errors", "credited nothing", func(h []Record, s *State) []Record {
			s.Effects["t1"] = Effect{Funds: true}
			return h
		}},
		{"a refused payment that credited", "truthful-errors", "1 top-ups", func(h []Record, s *State) []Record {
			h[2].Status, h[2].Code, h[2].Unchanged = 402, "payment_required", true
			return h
		}},
		{"a send broadcast twice", "chain", "received 2000002", func(h []Record, s *State) []Record { s.Sends[0].Received = "2000002"; return h }},
		{"a send that never confirmed yet reached the chain", "chain", "received 1000001", func(h []Record, s *State) []Record {
			s.Sends[0].Status = "failed"
			return h
		}},
		{"one send, two transactions", "chain", "2 transactions", func(h []Record, s *State) []Record { s.Sends[0].Listed = 2; return h }},
		{"a lifecycle event delivered under two ids", "events", "want at most 1", func(h []Record, s *State) []Record {
			s.Deliveries = append(s.Deliveries, Delivery{EventID: "evt_5", Event: "wallet.transaction.queued", Subject: "wtx_1"})
			return h
		}},
		{"a send's final event lost", "events", "wallet.transaction.confirmed of wtx_1: 0 event ids", func(h []Record, s *State) []Record {
			s.Deliveries = s.Deliveries[:3]
			return h
		}},
		{"an invoke announced under more ids than calls", "events", "service.invoked: 2 event ids for 1 committed writes", func(h []Record, s *State) []Record {
			s.Unnamed = map[string]int{"service.invoked": 1}
			s.Deliveries = append(s.Deliveries, Delivery{EventID: "evt_7", Event: "service.invoked"}, Delivery{EventID: "evt_8", Event: "service.invoked"})
			return h
		}},
		{"a send's hold never ended though nothing waits", "money", "never ended (send s1, req_4)", func(h []Record, s *State) []Record {
			s.Entries = s.Entries[1:]
			return h
		}},
		{"a second event of a request that is no settlement", "audit", "2 audit events", func(h []Record, s *State) []Record {
			s.Audit[4].Operation = "wallets.transactions.create"
			return h
		}},
		{"a top-up announced twice", "events", "credits.topped_up of rcpt_1: 2 event ids", func(h []Record, s *State) []Record {
			s.Deliveries = append(s.Deliveries, Delivery{EventID: "evt_6", Event: "credits.topped_up", Subject: "rcpt_1"})
			return h
		}},
		{"a top-up never announced", "events", "credits.topped_up of rcpt_1: 0 event ids", func(h []Record, s *State) []Record {
			s.Deliveries = slices.DeleteFunc(s.Deliveries, func(d Delivery) bool { return d.Event == "credits.topped_up" })
			return h
		}},
		{"a charge the audit missed", "charges-audited", "audit events charged 10,", func(h []Record, s *State) []Record { s.Audit[0].ChargedMicro = 0; return h }},
		{"an answered request unaudited", "audit", "0 audit events", func(h []Record, s *State) []Record { s.Audit = nil; return h }},
		{"a request audited twice", "audit", "2 audit events", func(h []Record, s *State) []Record { s.Audit = append(s.Audit, s.Audit[0]); return h }},
		{"an event of a request never sent", "audit", "of no answered request", func(h []Record, s *State) []Record {
			s.Audit = append(s.Audit, AuditEvent{RequestID: "req_ghost", KeyID: "k1"})
			return h
		}},
		{"one write announced under two event ids", "events", "2 event ids", func(h []Record, s *State) []Record {
			s.Deliveries = append(s.Deliveries, Delivery{EventID: "evt_2", Event: "service.invoked", Subject: "i1"})
			return h
		}},
		{"a committed write's event lost", "events", "0 event ids", func(h []Record, s *State) []Record { s.Deliveries = nil; return h }},
		{"an event of a write that did not commit", "events", "no committed write", func(h []Record, s *State) []Record {
			s.Deliveries = append(s.Deliveries, Delivery{EventID: "evt_2", Event: "api_key.created", Subject: "key_ghost"})
			return h
		}},
		{"self-approval after a roll", "approvals", "lineage", func(h []Record, s *State) []Record {
			s.Keys = append(s.Keys, Key{ID: "k2", Parent: "k1"}, Key{ID: "k3", Parent: "k1", RolledFrom: "k2"})
			return append(h, Record{Op: "decide", Path: "/v1/approvals/apr_1", KeyID: "k3", Requester: "k2", Status: 200, Sent: t0, Answered: t0})
		}},
		{"a 503 that changed something", "truthful-errors", "nothing changed", func(h []Record, s *State) []Record {
			h[0].Status, h[0].Code, h[0].Unchanged = 503, "service_unavailable", true
			return h
		}},
		{"an acknowledged write lost", "truthful-errors", "is gone", func(h []Record, s *State) []Record {
			s.Effects["i1"] = Effect{Creates: true, Debits: 1}
			return h
		}},
		{"a late answer", "bounds", "after 6s", func(h []Record, s *State) []Record { h[0].Answered = t0.Add(6 * time.Second); return h }},
		{"memory past its bound", "bounds", "RSS", func(h []Record, s *State) []Record { s.MaxRSSBytes = 2 << 30; return h }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, s := clean()
			h = tc.breakIt(h, &s)
			for _, v := range Check(h, s) {
				switch {
				case v.Name == tc.invariant && !strings.Contains(strings.Join(v.Violations, "\n"), tc.want):
					t.Errorf("%s reported %v; want %q", v.Name, v.Violations, tc.want)
				case v.Name != tc.invariant && !v.OK() && !related(tc.invariant, v.Name):
					t.Errorf("%s also failed: %v", v.Name, v.Violations)
				}
			}
		})
	}
}

// A send or a swap waiting for its approval keeps its hold: its hold's not
// having ended is no violation, and it is one once nothing waits.
func TestAHoldOfASendWaitingForItsApprovalMayStayHeld(t *testing.T) {
	h, s := clean()
	s.Entries = s.Entries[1:]
	s.Waiting = map[string]bool{"req_4": true}
	if vs := checkMoney(h, s); len(vs) > 0 {
		t.Fatalf("reported %v", vs)
	}
	s.Waiting = nil
	if vs := checkMoney(h, s); len(vs) == 0 {
		t.Fatal("a hold nothing waits for went unreported")
	}
}

// The lineage of a key is its roll chain both ways, its ancestors and
// everything below any key of that chain; a sibling is outside it.
func TestLineageIsTheRollChainItsAncestorsAndDescendants(t *testing.T) {
	keys := []Key{{ID: "root"}, {ID: "a", Parent: "root"}, {ID: "a2", Parent: "root", RolledFrom: "a"}, {ID: "a3", Parent: "root", RolledFrom: "a2"},
		{ID: "child", Parent: "a"}, {ID: "grand", Parent: "child"}, {ID: "sib", Parent: "root"}}
	got := Lineage(keys, "a2")
	for _, id := range []string{"root", "a", "a2", "a3", "child", "grand"} {
		if !got[id] {
			t.Errorf("%s is outside the lineage of a2", id)
		}
	}
	if got["sib"] {
		t.Error("a sibling is in the lineage")
	}
}

// related invariants see one breakage from two sides: an audit event lost
// or doubled is also a charge the audit sums get wrong.
func related(a, b string) bool {
	pair := map[string]bool{"audit": true, "charges-audited": true}
	return a == "money" || b == "money" || pair[a] && pair[b]
}

// On a server that rolls no usage up (the AWS backend run locally), an
// empty /usage is no violation; the audit events still must sum to the
// ledger's spending.
func TestUsageIsLeftOutWhereTheServerRollsNoneUp(t *testing.T) {
	h, s := clean()
	s.UsageMicro, s.NoUsage = 0, true
	if vs := checkChargesAudited(h, s); len(vs) > 0 {
		t.Fatalf("reported %v", vs)
	}
	s.Audit[0].ChargedMicro = 0
	if vs := checkChargesAudited(h, s); len(vs) == 0 {
		t.Fatal("a charge no event carries went unreported")
	}
}

// A hold taken by an attempt that died unanswered names a request the
// client never heard of: it waits with its send when the key's attempt in
// flight at the hold's time is of a send that waits for its approval, and
// not otherwise.
func TestAHoldOfADeadAttemptWaitsWithTheSendItWasMadeFor(t *testing.T) {
	h := []Record{
		{Op: "send", KeyID: "k1", Idem: "s1", Sent: t0, Answered: t0.Add(time.Second)},
		{Op: "send", KeyID: "k1", Idem: "s1", Sent: t0.Add(2 * time.Second), Answered: t0.Add(3 * time.Second), Status: 202, RequestID: "req_2"},
		{Op: "order", KeyID: "k1", Idem: "o1", Sent: t0.Add(4 * time.Second), Answered: t0.Add(5 * time.Second)},
	}
	entries := []Entry{
		{Type: "hold", Reference: "hld_1", RequestID: "req_dead1", KeyID: "k1", At: t0.Add(500 * time.Millisecond)},
		{Type: "hold", Reference: "hld_2", RequestID: "req_dead2", KeyID: "k1", At: t0.Add(4500 * time.Millisecond)},
	}
	got := waitingHolds(h, entries, map[string]bool{"s1": true})
	if !got["req_dead1"] || !got["req_2"] {
		t.Errorf("the send's requests are not waiting: %v", got)
	}
	if got["req_dead2"] {
		t.Error("the order's dead attempt waits with the send")
	}
}

// A top-up credited by an attempt that died unanswered names a request the
// client never heard of: it counts, with its payment, for the
// Idempotency-Key whose retry answered with its receipt, once, so that an
// acknowledged top-up credited by its dead first attempt is no top-up that
// "credited nothing". A reuse of the payment under another key is credited
// nothing, and a dead attempt's top-up no answer names counts for no key.
func TestATopUpCreditedByADeadAttemptCountsForTheRetryThatAnsweredIt(t *testing.T) {
	h := []Record{
		{Op: "topup", KeyID: "k1", Idem: "t1", Status: 402, RequestID: "req_1", Unchanged: true},
		{Op: "topup", KeyID: "k1", Idem: "t1", Payment: "0xn1"},
		{Op: "topup", KeyID: "k1", Idem: "t1", Payment: "0xn1", Status: 200, RequestID: "req_3", Made: "rcpt_1"},
		{Op: "topup", KeyID: "k1", Idem: "t1", Payment: "0xn1", Status: 200, RequestID: "req_4", Made: "rcpt_1"},
		{Op: "topup.reuse", KeyID: "k1", Idem: "t2", Payment: "0xn1", Status: 402, RequestID: "req_5", Unchanged: true},
		{Op: "topup", KeyID: "k1", Idem: "t3", Payment: "0xn2"},
	}
	entries := []Entry{
		{Type: "top_up", Reference: "rcpt_1", RequestID: "req_dead1", Amount: 500},
		{Type: "top_up", Reference: "rcpt_2", RequestID: "req_dead2", Amount: 500},
	}
	got, payments := effects(h, entries)
	if e := got["t1"]; e.Credits != 1 || !e.Funds {
		t.Errorf("t1: %+v, want its top-up credited once", e)
	}
	if payments["0xn1"] != 1 {
		t.Errorf("payment 0xn1 credited %d times, want 1", payments["0xn1"])
	}
	if got["t2"].Credits != 0 || got["t3"].Credits != 0 || payments["0xn2"] != 0 {
		t.Errorf("t2 %+v, t3 %+v, 0xn2 %d: want nothing credited to them", got["t2"], got["t3"], payments["0xn2"])
	}
}

// chargedByItsDeadAttempt gives the send s1 of clean an attempt that died
// unanswered before the one answered 202, and a hold of that attempt's
// request, which no answer names: captured, or refund of its 10 given back.
func chargedByItsDeadAttempt(h []Record, s *State, refund int64) []Record {
	h = append(h, Record{Op: "send", Method: "POST", Path: "/v1/wallets/wal_1/transactions", KeyID: "k1", Idem: "s1",
		Sent: t0.Add(-2 * time.Second), Answered: t0.Add(-time.Second), Timeout: 4 * time.Second})
	at := t0.Add(-1500 * time.Millisecond)
	ended := Entry{ID: "led_8", Type: "capture", Reference: "hld_3", RequestID: "req_w", At: at, BalanceAfter: 580 - 10}
	if refund != 0 {
		ended = Entry{ID: "led_8", Type: "release", Reference: "hld_3", RequestID: "req_w", At: at, Amount: refund, BalanceAfter: 580 - 10 + refund}
	}
	s.Entries = append([]Entry{ended, {ID: "led_7", Type: "hold", Reference: "hld_3", RequestID: "req_dead", Operation: "wallets.transactions.create",
		KeyID: "k1", At: at, Amount: -10, BalanceAfter: 570}}, s.Entries...)
	s.Balance = ended.BalanceAfter
	return h
}

// A debit of a request no answer names counts for a call of its key that
// had an attempt in flight, unanswered, when it was made: a second charge
// of the call whose retry took its own is reported, and nothing is when
// the dead attempt's hold was given back in full, or when another call of
// the key, killed at the same moment, can have taken it.
func TestADeadAttemptsDebitCountsForTheCallItWasMadeFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(h []Record, s *State) []Record
		want    string
	}{
		{"a second hold of the send by its dead attempt", func(h []Record, s *State) []Record { return chargedByItsDeadAttempt(h, s, 0) },
			"charged key k1's Idempotency-Key s1 a second time"},
		{"the dead attempt's hold released in full", func(h []Record, s *State) []Record { return chargedByItsDeadAttempt(h, s, 10) }, ""},
		{"another call of the key in flight, unanswered, when the hold was taken", func(h []Record, s *State) []Record {
			h = chargedByItsDeadAttempt(h, s, 0)
			return append(h, Record{Op: "invoke", KeyID: "k1", Idem: "i2", Sent: t0.Add(-3 * time.Second), Answered: t0.Add(-time.Second)})
		}, ""},
		{"that call answered with a hold of its own", func(h []Record, s *State) []Record {
			h = chargedByItsDeadAttempt(h, s, 0)
			s.Entries = append([]Entry{{ID: "led_9", Type: "hold", Reference: "hld_4", RequestID: "req_5", KeyID: "k1", Amount: -10, BalanceAfter: 560}}, s.Entries...)
			s.Balance = 560
			return append(h, Record{Op: "invoke", KeyID: "k1", Idem: "i2", Sent: t0.Add(-3 * time.Second), Answered: t0.Add(-time.Second)},
				Record{Op: "invoke", KeyID: "k1", Idem: "i2", Sent: t0, Answered: t0, Status: 200, RequestID: "req_5"})
		}, "charged key k1's Idempotency-Key s1 or i2 a second time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, s := clean()
			h = tc.breakIt(h, &s)
			got := strings.Join(doubleCharges(h, s.Entries), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("reported %q; want %q", got, tc.want)
			}
		})
	}
}
