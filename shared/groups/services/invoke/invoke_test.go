package invoke_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/services/invoke"
)

// scripted is a managed service that answers what the test says and
// counts the calls it was asked to make, by idempotency key.
type scripted struct {
	charge int64
	err    error
	calls  map[string]int
	// during runs once, inside the first call, while its hold is held.
	during func()
}

func (s *scripted) Invoke(_ context.Context, r upstream.Request) (upstream.Result, error) {
	s.calls[r.IdempotencyKey]++
	if f := s.during; f != nil {
		s.during = nil
		f()
	}
	if s.err != nil {
		return upstream.Result{}, s.err
	}
	return upstream.Result{Output: json.RawMessage(`{"ok":true}`), ChargedMicro: min(s.charge, r.MaxChargeMicro)}, nil
}

const account = "acct_invoke"

func setup(t *testing.T, b teststores.Backend, svc *scripted, balance int64) (*invoke.Pipeline, store.Store) {
	t.Helper()
	st := b.Open(t, time.Now)
	if err := st.Transact(context.Background(), credits.OpenAccountOps(account, balance, "test", time.Now())); err != nil {
		t.Fatal(err)
	}
	return &invoke.Pipeline{
		Ledger: credits.NewLedger(st, time.Now), Limits: limits.NewCounter(st, time.Now, time.Minute),
		Approvals: approvals.NewRepo(st, time.Now), Services: upstream.Router{"core-research": svc}, Timeout: 5 * time.Second,
	}, st
}

func balanceOf(t *testing.T, st store.Store) int64 {
	t.Helper()
	it, err := st.Get(context.Background(), accounts.Key(account))
	if err != nil {
		t.Fatal(err)
	}
	return it.Int(accounts.AttrBalance)
}

var caller = invoke.Caller{AccountID: account, Chain: []limits.Owner{{ID: "key_1"}}}

// The pipeline charges exactly what the service reports (at most the
// operation's price), and nothing when the call fails or cannot be paid.
func TestThePipelineChargesExactlyWhatTheServiceReports(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				balance  int64
				charge   int64
				err      error
				wantCode apierr.Code
				charged  int64
			}{
				{"exact charge", 1_000_000, 1234, nil, "", 1234},
				{"free call", 1_000_000, 0, nil, "", 0},
				{"service unavailable", 1_000_000, 1234, &upstream.UnavailableError{}, apierr.ServiceUnavailable, 0},
				{"balance too low for the price", 10, 1234, nil, apierr.InsufficientCredits, 0},
			} {
				t.Run(tc.name, func(t *testing.T) {
					svc := &scripted{charge: tc.charge, err: tc.err, calls: map[string]int{}}
					p, st := setup(t, b, svc, tc.balance)
					res, err := p.Run(context.Background(), caller, invoke.Call{ServiceID: "core-research", OperationID: "research.query"})
					var ae *apierr.Error
					switch {
					case tc.wantCode == "" && err != nil:
						t.Fatalf("call: %v", err)
					case tc.wantCode != "" && (!errors.As(err, &ae) || ae.Code != tc.wantCode):
						t.Fatalf("error %v, want %s", err, tc.wantCode)
					case tc.wantCode == "" && res.ChargedMicro != tc.charged:
						t.Fatalf("charged %d, want %d", res.ChargedMicro, tc.charged)
					}
					if got := tc.balance - balanceOf(t, st); got != tc.charged {
						t.Fatalf("the balance moved by %d, want %d", got, tc.charged)
					}
				})
			}
		})
	}
}

// A call retried with its identity after a lost answer reuses the first
// attempt's hold: the service is asked again with the same idempotency key
// and the account is charged once.
func TestARetriedCallWithItsIdentityIsChargedOnce(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			svc := &scripted{charge: 5000, calls: map[string]int{}}
			p, st := setup(t, b, svc, 1_000_000)
			call := invoke.Call{ServiceID: "core-research", OperationID: "research.query", CallID: "call-1"}
			for range 3 {
				res, err := p.Run(context.Background(), caller, call)
				if err != nil || res.ChargedMicro != 5000 {
					t.Fatalf("run: %+v %v", res, err)
				}
			}
			if got := 1_000_000 - balanceOf(t, st); got != 5000 {
				t.Fatalf("charged %d over three attempts, want 5000 once", got)
			}
			if svc.calls["call-1"] != 3 {
				t.Fatalf("calls %v: each attempt must reach the service with the call's identity", svc.calls)
			}
		})
	}
}

// failingCapture is a store whose next Transact after it is armed fails as
// an outage would, after the hold before it committed: the service ran,
// and only the capture was lost.
type failingCapture struct {
	store.Store
	armed int
}

func (f *failingCapture) Transact(ctx context.Context, ops []store.Op) error {
	if f.armed > 0 {
		if f.armed--; f.armed == 0 {
			return fmt.Errorf("capture: %w", store.ErrUnavailable)
		}
	}
	return f.Store.Transact(ctx, ops)
}

// A call whose capture failed after the service ran is finished by its
// retry with the same identity, even when the account was sliced in
// between and the retrying process knows it: the retry finds the first
// attempt's hold, the service is asked again under the same idempotency
// key (which it deduplicates), and the account is charged once, with no
// second hold left behind.
func TestARetryAfterALostCaptureOnASlicedAccountIsChargedOnce(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			svc := &scripted{charge: 5000, calls: map[string]int{}}
			p, st := setup(t, b, svc, 1_000_000)
			f := &failingCapture{Store: st, armed: 2} // the hold commits, the capture fails
			p.Ledger = credits.NewLedger(f, time.Now)
			call := invoke.Call{ServiceID: "core-research", OperationID: "research.query", CallID: "call-lost"}
			if _, err := p.Run(context.Background(), caller, call); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("first attempt: %v; want the capture's outage", err)
			}
			if err := credits.NewLedger(st, time.Now).SetSlices(context.Background(), account, 4); err != nil {
				t.Fatal(err)
			}
			retrying := credits.NewLedger(st, time.Now)
			h, err := retrying.Hold(context.Background(), account, 1, "probe", time.Minute) // learns the slicing
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Capture(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			p.Ledger = retrying
			res, err := p.Run(context.Background(), caller, call)
			if err != nil || res.ChargedMicro != 5000 {
				t.Fatalf("retry: %+v %v", res, err)
			}
			total, err := retrying.Balance(context.Background(), account)
			if err != nil {
				t.Fatal(err)
			}
			if got := 1_000_000 - 1 - total; got != 5000 {
				t.Fatalf("the call took %d from the balance; want 5000 once (a second hold is held)", got)
			}
			if svc.calls["call-lost"] != 2 {
				t.Fatalf("calls %v: both attempts reach the service under the call's identity", svc.calls)
			}
			later := credits.NewLedger(st, func() time.Time { return time.Now().Add(time.Hour) })
			if n, err := later.SweepHolds(context.Background(), time.Minute); err != nil || n != 0 {
				t.Fatalf("the sweep released %d holds (%v); want none left held", n, err)
			}
		})
	}
}

// sweepAt sweeps st's holds as the clock will read after d, with no
// grace: what a sweeper does to a holder that outlived its deadline.
func sweepAt(t *testing.T, st store.Store, d time.Duration) int {
	t.Helper()
	n, err := credits.NewLedger(st, func() time.Time { return time.Now().Add(d) }).SweepHolds(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A call's hold lasts as long as its holder may: until the request's
// deadline when that is later than the call's own timeout, since the
// capture comes after the call.
func TestACallsHoldOutlivesTheRequestThatHoldsIt(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			svc := &scripted{charge: 5000, calls: map[string]int{}}
			p, st := setup(t, b, svc, 1_000_000) // the call's timeout: 5 s
			svc.during = func() {
				if n := sweepAt(t, st, 20*time.Second); n != 0 {
					t.Errorf("a sweep 20 s on released %d holds of a request with 30 s left", n)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := p.Run(ctx, caller, invoke.Call{ServiceID: "core-research", OperationID: "research.query", CallID: "call-long"})
			if err != nil || res.ChargedMicro != 5000 {
				t.Fatalf("run: %+v %v", res, err)
			}
		})
	}
}

// A holder that outlives its hold's deadline and grace (a starved
// process) finds the hold released when it captures: it answers an outage
// to retry with the same identity, having charged nothing, and the retry
// runs the call again under its identity and charges it once. One that
// finds the hold captured by a retry that took it over answers that
// retry's charge, charging nothing more.
func TestACaptureThatFindsItsHoldEndedChargesTheCallOnce(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name+"/released by the sweep", func(t *testing.T) {
			svc := &scripted{charge: 5000, calls: map[string]int{}}
			p, st := setup(t, b, svc, 1_000_000)
			svc.during = func() { sweepAt(t, st, time.Hour) }
			call := invoke.Call{ServiceID: "core-research", OperationID: "research.query", CallID: "call-lapsed"}
			if _, err := p.Run(context.Background(), caller, call); !errors.Is(err, credits.ErrHoldLapsed) || !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("first attempt: %v; want the lapsed hold, as an outage to retry", err)
			}
			if got := 1_000_000 - balanceOf(t, st); got != 0 {
				t.Fatalf("the lapsed attempt took %d; want nothing", got)
			}
			res, err := p.Run(context.Background(), caller, call)
			if err != nil || res.ChargedMicro != 5000 {
				t.Fatalf("retry: %+v %v", res, err)
			}
			if got := 1_000_000 - balanceOf(t, st); got != 5000 {
				t.Fatalf("charged %d; want 5000 once", got)
			}
			if svc.calls["call-lapsed"] != 2 {
				t.Fatalf("calls %v: the retry asks the service again under the call's identity", svc.calls)
			}
		})
		t.Run(b.Name+"/captured by a retry", func(t *testing.T) {
			svc := &scripted{charge: 5000, calls: map[string]int{}}
			p, st := setup(t, b, svc, 1_000_000)
			call := invoke.Call{ServiceID: "core-research", OperationID: "research.query", CallID: "call-overtaken"}
			svc.during = func() {
				svc.charge = 4000 // what the retry's answer reports: the charge that stands
				if res, err := p.Run(context.Background(), caller, call); err != nil || res.ChargedMicro != 4000 {
					t.Errorf("retry: %+v %v", res, err)
				}
				svc.charge = 5000
			}
			res, err := p.Run(context.Background(), caller, call)
			if err != nil || res.ChargedMicro != 4000 {
				t.Fatalf("first attempt: %+v %v; want the retry's charge", res, err)
			}
			if got := 1_000_000 - balanceOf(t, st); got != 4000 {
				t.Fatalf("charged %d; want 4000 once", got)
			}
		})
	}
}
