package credits

import (
	"context"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
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

// A hold a request takes with Hold or HoldOnce is the request's to end:
// its debit is carried by whatever ends it. So a request that answered
// (or died) with its hold still held charged nothing on its event, and the
// sweep that releases the hold writes no event of its own: the request
// has one event, and the audit sums to what the account spent (nothing).
// A hold committed with an effect that outlives its request (HoldOps, an
// order) is carried by the request's event and settled by its own.
func TestASweptHoldOfARequestLeavesTheAuditSummingToWhatWasSpent(t *testing.T) {
	for _, b := range teststores.All() {
		for _, tc := range []struct {
			name       string
			take       func(ctx context.Context, l *Ledger, acct string) error
			wantEvents []int64 // the sweep's events' charges
			wantNoted  int64   // what the request's event carries
		}{
			{"a call's hold", func(ctx context.Context, l *Ledger, acct string) error {
				_, err := l.HoldOnce(ctx, acct, 10_000, "invoke", "call_swept", time.Second)
				return err
			}, nil, 0},
			{"a call's fresh hold after a released one", func(ctx context.Context, l *Ledger, acct string) error {
				h, err := l.HoldOnce(ctx, acct, 10_000, "invoke", "call_swept", time.Second)
				if err != nil {
					return err
				}
				if err := h.Release(ctx); err != nil {
					return err
				}
				_, err = l.HoldOnce(ctx, acct, 10_000, "invoke", "call_swept", time.Second)
				return err
			}, nil, 0},
			{"a hold without a call", func(ctx context.Context, l *Ledger, acct string) error {
				_, err := l.Hold(ctx, acct, 10_000, "invoke", time.Second)
				return err
			}, nil, 0},
			{"a hold committed with an order", func(ctx context.Context, l *Ledger, acct string) error {
				return l.Apply(ctx, acct, func(a Account) ([]store.Op, *Change, error) {
					return HoldOps(ctx, a, "hld_order", 10_000, "order", time.Now(), time.Now().Add(time.Second))
				})
			}, []int64{-10_000}, 10_000},
		} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				st := b.Open(t, time.Now)
				sweptBefore(t, st, time.Now())
				acct := open(t, st, 1_000_000)
				var noted int64
				l := NewLedger(st, time.Now)
				if err := tc.take(WithRequest(context.Background(), noting{&noted}), l, acct); err != nil {
					t.Fatal(err)
				}
				if noted != tc.wantNoted {
					t.Fatalf("the request's event carries %d; want %d", noted, tc.wantNoted)
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
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, e := range evs {
					got = append(got, e.ChargedMicro)
				}
				if !slices.Equal(got, tc.wantEvents) {
					t.Fatalf("the sweep's events carry %v; want %v", got, tc.wantEvents)
				}
				if bal, _ := l.Balance(context.Background(), acct); bal != 1_000_000 {
					t.Fatalf("balance %d after the sweep; want all of it back", bal)
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

// A call whose hold was released (its holder died and the sweep released
// it, or its call failed) takes a fresh hold on its next attempt, the
// call's next round; an attempt after that finds the round's hold, held or
// captured, rather than taking yet another: the call is charged once
// however many of its attempts die.
func TestTheAttemptAfterAFreshHoldFindsItAndChargesTheCallOnce(t *testing.T) {
	for _, b := range teststores.All() {
		for _, tc := range []struct {
			name     string
			captured bool // the second attempt captured before it died
		}{{"died holding its fresh hold", false}, {"died after capturing its fresh hold", true}} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				st := b.Open(t, time.Now)
				acct := open(t, st, 1_000_000)
				l := NewLedger(st, time.Now)
				attempt := func() (*Hold, *int64) {
					var noted int64
					ctx := WithRequest(context.Background(), noting{&noted})
					h, err := NewLedger(st, time.Now).HoldOnce(ctx, acct, 10_000, "invoke", "call_rounds", time.Minute)
					if err != nil {
						t.Fatal(err)
					}
					return h, &noted
				}
				first, _ := attempt()
				if err := first.Release(context.Background()); err != nil { // as the sweep does
					t.Fatal(err)
				}
				second, _ := attempt()
				if second.ID == first.ID {
					t.Fatalf("the second attempt took the released hold %s again", first.ID)
				}
				if tc.captured {
					if err := second.Capture(WithRequest(context.Background(), noting{new(int64)}), 7_000); err != nil {
						t.Fatal(err)
					}
				}
				third, noted := attempt()
				if third.ID != second.ID {
					t.Fatalf("the third attempt took %s; want the call's hold %s", third.ID, second.ID)
				}
				if err := third.Capture(WithRequest(context.Background(), noting{noted}), 7_000); err != nil {
					t.Fatal(err)
				}
				if bal, _ := l.Balance(context.Background(), acct); bal != 1_000_000-7_000 {
					t.Fatalf("balance %d; want the call charged 7000 once", bal)
				}
				if n, err := NewLedger(st, func() time.Time { return time.Now().Add(time.Hour) }).SweepHolds(context.Background(), time.Minute); err != nil || n != 0 {
					t.Fatalf("the sweep released %d holds (%v); want none left held", n, err)
				}
			})
		}
	}
}
