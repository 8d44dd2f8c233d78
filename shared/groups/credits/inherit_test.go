package credits

import (
	"context"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
)

// noting is a request whose audit event adds up what it is told it charged.
type noting struct{ charged *int64 }

func (n noting) Attribution() Attribution {
	return Attribution{RequestID: "req_retry", KeyPath: []string{"key_a"}}
}
func (n noting) Charged(micro int64) { *n.charged += micro }

// A call's first attempt that dies after its hold (or after its capture)
// and before its answer is stored never journals its audit event: the
// retry that takes the hold over is the call's answer, and its event
// carries the call's whole charge, once.
func TestARetryThatTakesOverItsCallsHoldCarriesTheCallsCharge(t *testing.T) {
	for _, b := range teststores.All() {
		for _, tc := range []struct {
			name       string
			firstEnded bool // the first attempt captured before it died
		}{{"died holding", false}, {"died after its capture", true}} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				st := b.Open(t, time.Now)
				acct := open(t, st, 1_000_000)
				var lost, carried int64
				first := WithRequest(context.Background(), noting{&lost})
				h, err := NewLedger(st, time.Now).HoldOnce(first, acct, 10_000, "invoke", "call_died", time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if tc.firstEnded {
					if err := h.Capture(first, 7_000); err != nil {
						t.Fatal(err)
					}
				}
				retry := WithRequest(context.Background(), noting{&carried})
				h, err = NewLedger(st, time.Now).HoldOnce(retry, acct, 10_000, "invoke", "call_died", time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Capture(retry, 7_000); err != nil {
					t.Fatal(err)
				}
				if carried != 7_000 {
					t.Fatalf("the retry's event carries %d; want the call's charge, 7000", carried)
				}
				if bal, _ := NewLedger(st, time.Now).Balance(context.Background(), acct); bal != 1_000_000-7_000 {
					t.Fatalf("balance %d; want one charge of 7000", bal)
				}
			})
		}
	}
}

// A call's hold its dead request left is released by the sweep: the hold's
// debit was to be carried by the event of the request that died, so the
// sweep's event carries it with the refund, and the audit sums to what the
// account spent (nothing). A hold an answered request left for a worker
// is settled with the refund alone, its request's event having carried
// the debit.
func TestASweptCallHoldIsAuditedAsChargingNothing(t *testing.T) {
	for _, b := range teststores.All() {
		for _, tc := range []struct {
			name            string
			call, refreshed bool // refreshed: a retry's fresh hold after the first was released
			wantEvent       int64
		}{{"a call's hold", true, false, 0}, {"a call's fresh hold after a released one", true, true, 0}, {"a worker's hold", false, false, -10_000}} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				st := b.Open(t, time.Now)
				sweptBefore(t, st, time.Now())
				acct := open(t, st, 1_000_000)
				var lost int64
				req := WithRequest(context.Background(), noting{&lost})
				l := NewLedger(st, time.Now)
				var err error
				if tc.call {
					var h *Hold
					h, err = l.HoldOnce(req, acct, 10_000, "invoke", "call_swept", time.Second)
					if tc.refreshed && err == nil {
						if err := h.Release(req); err != nil {
							t.Fatal(err)
						}
						_, err = l.HoldOnce(req, acct, 10_000, "invoke", "call_swept", time.Second)
					}
				} else {
					_, err = l.Hold(req, acct, 10_000, "order", time.Second)
				}
				if err != nil {
					t.Fatal(err)
				}
				later := NewLedger(st, func() time.Time { return time.Now().Add(time.Hour) })
				if n, err := later.SweepHolds(context.Background(), time.Minute); err != nil || n != 1 {
					t.Fatalf("swept %d (%v)", n, err)
				}
				viewer := audit.Viewer{AccountID: acct, KeyPath: []string{"key_a"}}
				// The hour the events were written in: a default range
				// reads every day of the retention, shard by shard.
				f, err := audit.ParseListQuery(viewer, audit.ListQuery{Since: time.Now().Add(-time.Hour).Format(time.RFC3339),
					Until: time.Now().Add(2 * time.Hour).Format(time.RFC3339)}, time.Now().Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				evs, _, err := audit.NewRepo(st, time.Now).List(context.Background(), f)
				if err != nil || len(evs) != 1 {
					t.Fatalf("events %d (%v)", len(evs), err)
				}
				if evs[0].ChargedMicro != tc.wantEvent {
					t.Fatalf("the sweep's event carries %d; want %d", evs[0].ChargedMicro, tc.wantEvent)
				}
			})
		}
	}
}

// A call's hold taken outside any request (a run's step, for its key) is
// ended by its worker, whose own event carries the charge, once.
func TestACallHoldOfWorkForAKeyIsAuditedOnceByItsWorker(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			acct := open(t, st, 1_000_000)
			work := ForKey(context.Background(), Attribution{RequestID: "run_1", KeyPath: []string{"key_a"}, Operation: "runs.step"})
			l := NewLedger(st, time.Now)
			h, err := l.HoldOnce(work, acct, 10_000, "invoke", "call_step", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Capture(work, 7_000); err != nil {
				t.Fatal(err)
			}
			viewer := audit.Viewer{AccountID: acct, KeyPath: []string{"key_a"}}
			f, err := audit.ParseListQuery(viewer, audit.ListQuery{Since: time.Now().Add(-time.Hour).Format(time.RFC3339),
				Until: time.Now().Add(time.Hour).Format(time.RFC3339)}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			evs, _, err := audit.NewRepo(st, time.Now).List(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, e := range evs {
				sum += e.ChargedMicro
			}
			if sum != 7_000 {
				t.Fatalf("the step's events carry %d; want its charge, 7000", sum)
			}
		})
	}
}
