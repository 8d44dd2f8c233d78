package credits_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/groups/credits"
)

// start is where each test's clock stands at first.
var start = time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)

func sweep(t *testing.T, l *credits.Ledger) int {
	t.Helper()
	n, err := l.SweepHolds(context.Background(), credits.GraceAfterDeadline)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func holdState(t *testing.T, st store.Store, acct, id string) string {
	t.Helper()
	it, err := st.Get(context.Background(), store.Key{PK: "acct#" + acct, SK: "hold#" + id})
	if err != nil {
		t.Fatal(err)
	}
	return it.String("state")
}

// wantBalance checks the balance and that the ledger adds up to it.
func wantBalance(t *testing.T, l *credits.Ledger, acct string, want int64) {
	t.Helper()
	bal, err := l.Balance(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := sumEntries(t, l, acct); bal != want || sum != bal {
		t.Fatalf("balance %d, ledger sums to %d; want %d", bal, sum, want)
	}
}

// A store's first sweep walks the whole lookback and leaves the cursor
// the later ones start from; the other sweep tests start from that cursor
// (SweptBefore).
func TestAHoldOrphanedByACrashIsReleasedAfterItsDeadlineAndGrace(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(start)
			st := b.Open(t, c.Now)
			l := credits.NewLedger(st, c.Now)
			acct := openAccount(t, st, 1_000_000)
			sweep(t, l)
			// The process dies holding it: nobody captures or releases.
			h, err := l.Hold(context.Background(), acct, 300_000, "invoke", 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.Advance(30*time.Second + credits.GraceAfterDeadline - time.Second)
			if n := sweep(t, l); n != 0 || holdState(t, st, acct, h.ID) != "held" {
				t.Fatalf("released %d before the deadline and grace passed", n)
			}
			wantBalance(t, l, acct, 700_000)
			c.Advance(2 * time.Second)
			if n := sweep(t, l); n != 1 || holdState(t, st, acct, h.ID) != "released" {
				t.Fatalf("released %d; want the orphaned hold", n)
			}
			wantBalance(t, l, acct, 1_000_000)
			entries, err := l.Entries(context.Background(), acct, 0)
			if err != nil {
				t.Fatal(err)
			}
			releases := 0
			for _, e := range entries {
				if e.Type == credits.TypeRelease && e.Reference == h.ID && e.Amount == 300_000 {
					releases++
				}
			}
			if releases != 1 {
				t.Fatalf("ledger %+v; want one release entry of %s", entries, h.ID)
			}
			c.Advance(time.Hour)
			if n := sweep(t, l); n != 0 {
				t.Fatalf("a later sweep released %d again", n)
			}
			wantBalance(t, l, acct, 1_000_000)
		})
	}
}

func TestAnEndedHoldIsNotTouchedBySweeps(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(start)
			st := b.Open(t, c.Now)
			l := credits.NewLedger(st, c.Now)
			acct := openAccount(t, st, 1_000_000)
			credits.SweptBefore(t, st, c.Now())
			captured, err := l.Hold(context.Background(), acct, 300_000, "invoke", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := captured.Capture(context.Background(), 120_000); err != nil {
				t.Fatal(err)
			}
			released, err := l.Hold(context.Background(), acct, 100_000, "invoke", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := released.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.Advance(2 * time.Hour)
			if n := sweep(t, l); n != 0 {
				t.Fatalf("released %d ended holds", n)
			}
			if holdState(t, st, acct, captured.ID) != "captured" || holdState(t, st, acct, released.ID) != "released" {
				t.Fatal("a sweep changed an ended hold")
			}
			wantBalance(t, l, acct, 880_000)
		})
	}
}

func TestARestingOrdersHoldIsReleasedOnlyAfterTheOrderExpires(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(start)
			st := b.Open(t, c.Now)
			l := credits.NewLedger(st, c.Now)
			acct := openAccount(t, st, 1_000_000)
			credits.SweptBefore(t, st, c.Now())
			// A resting order's own expiry, days away. A sweep queries
			// every shard of every hour it passes (a thousand queries a
			// day), which the emulator serves one at a time; there the
			// order rests hours, still far past any call's deadline and
			// grace.
			life := 3 * 24 * time.Hour
			if b.Name != teststores.Embedded.Name {
				life = 3 * time.Hour
			}
			takeHold(t, l, st, acct, "hld_order", 200_000, c.Now(), c.Now().Add(life))
			step := life * 23 / 72
			for range 3 {
				c.Advance(step)
				if n := sweep(t, l); n != 0 {
					t.Fatalf("released %d holds of a resting order", n)
				}
			}
			wantBalance(t, l, acct, 800_000)
			c.Advance(life - 3*step + credits.GraceAfterDeadline)
			if n := sweep(t, l); n != 1 || holdState(t, st, acct, "hld_order") != "released" {
				t.Fatalf("released %d after the order expired; want its hold", n)
			}
			wantBalance(t, l, acct, 1_000_000)
		})
	}
}

func TestConcurrentSweepsReleaseEachOrphanedHoldOnce(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(start)
			st := b.Open(t, c.Now)
			l := credits.NewLedger(st, c.Now)
			acct := openAccount(t, st, 1_000_000)
			credits.SweptBefore(t, st, c.Now())
			for range 20 {
				if _, err := l.Hold(context.Background(), acct, 10_000, "invoke", time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			wantBalance(t, l, acct, 800_000)
			c.Advance(time.Minute + credits.GraceAfterDeadline)
			var wg sync.WaitGroup
			var total atomic.Int64
			for range 2 {
				wg.Go(func() {
					n, err := credits.NewLedger(st, c.Now).SweepHolds(context.Background(), credits.GraceAfterDeadline)
					if err != nil {
						t.Error(err)
					}
					total.Add(int64(n))
				})
			}
			wg.Wait()
			if total.Load() != 20 {
				t.Fatalf("two sweeps released %d holds; want 20 in all", total.Load())
			}
			wantBalance(t, l, acct, 1_000_000)
		})
	}
}
