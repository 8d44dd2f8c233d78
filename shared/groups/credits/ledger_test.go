package credits_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/credits"
)

func openAccount(t *testing.T, st store.Store, micro int64) string {
	t.Helper()
	if err := st.Transact(context.Background(), credits.OpenAccountOps("acct_test", micro, "test", time.Now())); err != nil {
		t.Fatal(err)
	}
	return "acct_test"
}

// takeHold commits a hold the way a caller composing it with its own
// effect does.
func takeHold(t *testing.T, l *credits.Ledger, st store.Store, acct, id string, micro int64, now, deadline time.Time) {
	t.Helper()
	ctx := context.Background()
	a, err := l.Account(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	ops, ch, err := credits.HoldOps(ctx, a, id, micro, "test", now, deadline)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(ctx, ops); err != nil {
		t.Fatal(err)
	}
	ch.Committed()
}

// sumEntries proves every movement has its entry: the ledger adds up to the balance.
func sumEntries(t *testing.T, l *credits.Ledger, acct string) (balance, charged int64) {
	t.Helper()
	entries, err := l.Entries(context.Background(), acct, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		balance += e.Amount
		charged += e.Charged
	}
	return balance, charged
}

func TestConcurrentHoldsNeverTakeTheBalanceBelowZero(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			l := credits.NewLedger(st, time.Now)
			acct := openAccount(t, st, 10*250_000) // covers exactly 10 holds
			var wg sync.WaitGroup
			var mu sync.Mutex
			held, refused := 0, 0
			for i := 0; i < 100; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := l.Hold(context.Background(), acct, 250_000, "op", time.Minute)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						held++
					case errors.Is(err, credits.ErrInsufficient):
						refused++
					default:
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			bal, err := l.Balance(context.Background(), acct)
			if err != nil {
				t.Fatal(err)
			}
			if held != 10 || refused != 90 || bal != 0 {
				t.Fatalf("held %d, refused %d, balance %d; want 10, 90, 0", held, refused, bal)
			}
			if sum, _ := sumEntries(t, l, acct); sum != bal {
				t.Fatalf("ledger sums to %d, balance is %d", sum, bal)
			}
		})
	}
}

func TestCaptureChargesExactlyAndReturnsTheRest(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			l := credits.NewLedger(st, time.Now)
			acct := openAccount(t, st, 1_000_000)
			ctx := context.Background()
			h, err := l.Hold(ctx, acct, 400_000, "invoke", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Capture(ctx, 123_456); err != nil {
				t.Fatal(err)
			}
			if err := h.Capture(ctx, 1); err == nil {
				t.Fatal("a hold was captured twice")
			}
			if err := h.Release(ctx); err == nil {
				t.Fatal("a captured hold was released")
			}
			h2, _ := l.Hold(ctx, acct, 100_000, "invoke", time.Minute)
			if err := h2.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Hold(ctx, acct, 0, "free", time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := (&credits.Hold{ID: h.ID, Amount: h.Amount}).Capture(ctx, h.Amount+1); err == nil {
				t.Fatal("captured more than held")
			}
			bal, _ := l.Balance(ctx, acct)
			if bal != 1_000_000-123_456 {
				t.Fatalf("balance = %d", bal)
			}
			sum, charged := sumEntries(t, l, acct)
			if sum != bal || charged != 123_456 {
				t.Fatalf("ledger: sum %d charged %d, balance %d", sum, charged, bal)
			}
		})
	}
}

func TestEndingAHoldAgainChangesNothing(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			acct := openAccount(t, st, 1_000_000)
			l := credits.NewLedger(st, time.Now)
			ctx := context.Background()
			deadline := time.Now().Add(time.Minute)
			takeHold(t, l, st, acct, "hld_a", 300_000, time.Now(), deadline)
			if err := l.HoldOf(acct, "hld_a", 300_000, deadline).Capture(ctx, 300_000); err != nil {
				t.Fatal(err)
			}
			for _, end := range []func() error{
				func() error { return l.HoldOf(acct, "hld_a", 300_000, deadline).Capture(ctx, 300_000) },
				func() error { return l.HoldOf(acct, "hld_a", 300_000, deadline).Release(ctx) },
				func() error { return l.HoldOf(acct, "hld_never", 300_000, deadline).Release(ctx) },
			} {
				if err := end(); !errors.Is(err, credits.ErrHoldEnded) {
					t.Fatalf("ending again: %v, want ErrHoldEnded", err)
				}
			}
			if bal, _ := l.Balance(ctx, acct); bal != 700_000 {
				t.Fatalf("balance %d, want 700000", bal)
			}
			if bal, charged := sumEntries(t, l, acct); bal != 700_000 || charged != 300_000 {
				t.Fatalf("ledger sums to %d charged %d", bal, charged)
			}
		})
	}
}

// Concurrent changes of one account commit one after another: listed in
// sequence, each entry's balance is the previous one's plus its amount,
// and the last one's is the balance.
func TestConcurrentChangesLeaveAChainOfBalances(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			l := credits.NewLedger(st, time.Now)
			acct := openAccount(t, st, 1_000_000)
			ctx := context.Background()
			var wg sync.WaitGroup
			for i := range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h, err := l.Hold(ctx, acct, 10_000, "op", time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if i%2 == 0 {
						err = h.Capture(ctx, 4_000)
					} else {
						err = h.Release(ctx)
					}
					if err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			entries, err := l.Entries(ctx, acct, 0)
			if err != nil {
				t.Fatal(err)
			}
			prev := int64(0)
			for i, e := range entries {
				if e.Seq != int64(i+1) || e.BalanceAfter != prev+e.Amount || i > 0 && e.OccurredAt.Before(entries[i-1].OccurredAt) {
					t.Fatalf("entry %d %+v after balance %d", i, e, prev)
				}
				prev = e.BalanceAfter
			}
			if bal, _ := l.Balance(ctx, acct); bal != prev || bal != 1_000_000-12*4_000 {
				t.Fatalf("balance %d, last entry %d", bal, prev)
			}
		})
	}
}

// A change made in a request is reported to it (its audit event carries
// it) and attributed to its key; a hold settled outside any request is an
// audit event of its own, shown to the key that took the hold.
func TestAChargeIsReportedToItsRequestAndASettlementIsItsOwnEvent(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			l := credits.NewLedger(st, time.Now)
			acct := openAccount(t, st, 1_000_000)
			var noted int64
			attr := credits.Attribution{RequestID: "req_1", KeyPath: []string{"key_root", "key_child"}, ProjectID: "prj_1", Operation: "trading.orders.create"}
			req := credits.WithRequest(context.Background(), testRequest{attr: attr, noted: &noted})
			deadline := time.Now().Add(time.Hour)
			a, err := l.Account(req, acct)
			if err != nil {
				t.Fatal(err)
			}
			ops, ch, err := credits.HoldOps(req, a, "hld_x", 250_000, "order", time.Now(), deadline)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Transact(req, ops); err != nil {
				t.Fatal(err)
			}
			ch.Committed()
			if noted != 250_000 {
				t.Fatalf("the request was told %d", noted)
			}
			// The worker releases it later, with no request in flight.
			worker := credits.SettledBy(context.Background(), "trading.orders.release")
			if err := l.HoldOf(acct, "hld_x", 250_000, deadline).Release(worker); err != nil {
				t.Fatal(err)
			}
			entries, _ := l.Entries(context.Background(), acct, 0)
			last := entries[len(entries)-1]
			if last.Type != credits.TypeRelease || last.KeyID() != "key_child" || last.RequestID != "req_1" || last.BalanceAfter != 1_000_000 {
				t.Fatalf("release entry %+v", last)
			}
			viewer := audit.Viewer{AccountID: acct, KeyPath: []string{"key_root"}}
			// The hour the events were written in: a default range reads
			// every day of the retention, shard by shard.
			f, err := audit.ParseListQuery(viewer, audit.ListQuery{Since: time.Now().Add(-time.Hour).Format(time.RFC3339),
				Until: time.Now().Add(time.Minute).Format(time.RFC3339)}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			evs, _, err := audit.NewRepo(st, time.Now).List(context.Background(), f)
			if err != nil || len(evs) != 1 {
				t.Fatalf("events %d (%v)", len(evs), err)
			}
			if ev := evs[0]; ev.Operation != "trading.orders.release" || ev.KeyID != "key_child" || ev.RequestID != "req_1" || ev.ChargedMicro != -250_000 || *ev.ProjectID != "prj_1" {
				t.Fatalf("settlement event %+v", ev)
			}
		})
	}
}

// testRequest is a request as the ledger sees one: who it is, and where
// its charges add up.
type testRequest struct {
	attr  credits.Attribution
	noted *int64
}

func (r testRequest) Attribution() credits.Attribution { return r.attr }
func (r testRequest) Charged(micro int64)              { *r.noted += micro }
