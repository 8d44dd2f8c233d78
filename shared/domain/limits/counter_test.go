package limits_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/limits"
)

func ptr[T any](v T) *T { return &v }

func eachBackend(t *testing.T, test func(t *testing.T, c *limits.Counter, clock *testclock.Clock)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			clock := testclock.New(time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC))
			test(t, limits.NewCounter(b.Open(t, clock.Now), clock.Now, 10*time.Second), clock)
		})
	}
	// The embedded server's counter: windows and leases in memory, credits
	// on the store.
	t.Run("local", func(t *testing.T) {
		clock := testclock.New(time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC))
		test(t, limits.NewCounter(teststores.Embedded.Open(t, clock.Now), clock.Now, 10*time.Second).WithLocalRequests(), clock)
	})
}

// The rule: with maxConcurrent K, a slow operation never has more
// than K in flight, measured inside the operation itself.
func TestMaxConcurrentNeverExceedsKInFlight(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, _ *testclock.Clock) {
		const k = 3
		chain := []limits.Owner{{ID: "key_a", Limits: limits.Set{"files.create": {MaxConcurrent: ptr(int64(k))}}}}
		var inFlight, peak, admitted, refused atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 24; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lease, err := c.Admit(context.Background(), chain, []string{"files.create"})
				var ex *limits.ExceededError
				if errors.As(err, &ex) {
					refused.Add(1)
					if ex.Selector != "files.create" || ex.Kind != "maxConcurrent" || ex.RetryAfterSeconds < 1 {
						t.Errorf("exceeded = %+v", ex)
					}
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				admitted.Add(1)
				n := inFlight.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(30 * time.Millisecond) // the slow operation
				inFlight.Add(-1)
				if err := lease.Release(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if peak.Load() > k {
			t.Fatalf("%d in flight at once, limit %d", peak.Load(), k)
		}
		if admitted.Load() < k || admitted.Load()+refused.Load() != 24 {
			t.Fatalf("admitted %d, refused %d", admitted.Load(), refused.Load())
		}
	})
}

func TestReleasedLeasesFreeTheirSlots(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, _ *testclock.Clock) {
		chain := []limits.Owner{{ID: "key_a", Limits: limits.Set{"*": {MaxConcurrent: ptr(int64(1))}}}}
		for i := 0; i < 5; i++ {
			lease, err := c.Admit(context.Background(), chain, []string{"projects.list"})
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if err := lease.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestARefusedRequestConsumesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, _ *testclock.Clock) {
		// The child allows 5 per minute, the parent 2: refusals by the parent
		// must not use up the child's window.
		chain := []limits.Owner{
			{ID: "key_parent", Limits: limits.Set{"projects.list": {RequestsPerMinute: ptr(int64(2))}}},
			{ID: "key_child", Limits: limits.Set{"*": {RequestsPerMinute: ptr(int64(5))}}},
		}
		ok := 0
		for i := 0; i < 6; i++ {
			if _, err := c.Admit(context.Background(), chain, []string{"projects.list"}); err == nil {
				ok++
			}
		}
		if ok != 2 {
			t.Fatalf("admitted %d, want 2", ok)
		}
		for i := 0; i < 3; i++ {
			if _, err := c.Admit(context.Background(), chain, []string{"projects.read"}); err != nil {
				t.Fatalf("projects.read %d refused: %v (the child's window was consumed by refused requests)", i, err)
			}
		}
	})
}

func TestRetryAfterCountsToTheEndOfTheWindow(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, _ *testclock.Clock) {
		chain := []limits.Owner{{ID: "key_a", Limits: limits.Set{"projects.list": {RequestsPerMinute: ptr(int64(1))}}}}
		if _, err := c.Admit(context.Background(), chain, []string{"projects.list"}); err != nil {
			t.Fatal(err)
		}
		_, err := c.Admit(context.Background(), chain, []string{"projects.list"})
		var ex *limits.ExceededError
		if !errors.As(err, &ex) || ex.RetryAfterSeconds != 30 || ex.Kind != "requestsPerMinute" {
			t.Fatalf("err = %v (%+v), want requestsPerMinute with 30 s left in the window", err, ex)
		}
	})
}

func TestCreditsPerDayReservesSettlesAndReleases(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, clock *testclock.Clock) {
		chain := []limits.Owner{
			{ID: "key_parent", Limits: limits.Set{"services.invoke": {CreditsPerDay: ptr(1.0)}}},
			{ID: "key_child"},
		}
		ops := []string{"services.invoke", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write"}
		ctx := context.Background()
		r1, err := c.ReserveCredits(ctx, chain, ops, 600_000)
		if err != nil {
			t.Fatal(err)
		}
		var ex *limits.ExceededError
		if _, err := c.ReserveCredits(ctx, chain, ops, 500_000); !errors.As(err, &ex) || ex.Kind != "creditsPerDay" || ex.Selector != "services.invoke" {
			t.Fatalf("over-reservation: %v", err)
		}
		if err := r1.Settle(ctx, 100_000); err != nil { // the exact charge was smaller
			t.Fatal(err)
		}
		r2, err := c.ReserveCredits(ctx, chain, ops, 900_000)
		if err != nil {
			t.Fatalf("settling must free the unused reservation: %v", err)
		}
		if err := r2.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReserveCredits(ctx, chain, ops, 900_000); err != nil {
			t.Fatalf("release must free the reservation: %v", err)
		}
		clock.Advance(24 * time.Hour) // a new UTC day starts from zero
		if _, err := c.ReserveCredits(ctx, chain, ops, 1_000_000); err != nil {
			t.Fatalf("new day: %v", err)
		}
	})
}

// A limit with only creditsPerDay has nothing for Admit
// to count; it must admit (and release) without touching the store instead of
// failing on an empty transaction.
func TestAdmitWithOnlyCreditsPerDayLimitsIsANoOpSuccess(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, _ *testclock.Clock) {
		ctx := context.Background()
		chain := []limits.Owner{
			{ID: "key_parent", Limits: limits.Set{"*": {CreditsPerDay: ptr(5.0)}}},
			{ID: "key_child", Limits: limits.Set{"services.invoke": {CreditsPerDay: ptr(1.0)}}},
		}
		ops := []string{"services.invoke", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write"}
		for i := 0; i < 3; i++ {
			lease, err := c.Admit(ctx, chain, ops)
			if err != nil {
				t.Fatalf("admit %d: %v", i, err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("release %d: %v", i, err)
			}
		}
		if _, err := c.ReserveCredits(ctx, chain, ops, 1_000_000); err != nil {
			t.Fatalf("the creditsPerDay limit still reserves: %v", err)
		}
		var ex *limits.ExceededError
		if _, err := c.ReserveCredits(ctx, chain, ops, 1); !errors.As(err, &ex) || ex.Kind != "creditsPerDay" {
			t.Fatalf("the creditsPerDay limit still caps: %v", err)
		}
	})
}
