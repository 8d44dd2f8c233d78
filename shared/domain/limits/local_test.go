package limits_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/domain/limits"
)

// Exactly N requests per window, however many race for it, and a refusal
// by one key of the chain leaves the other's window untouched.
func TestExactlyNRequestsPerWindowUnderConcurrency(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, clock *testclock.Clock) {
		const n, racers = 7, 24
		chain := []limits.Owner{
			{ID: "key_parent", Limits: limits.Set{"*": {RequestsPerMinute: ptr(int64(100))}}},
			{ID: "key_child", Limits: limits.Set{"projects.list": {RequestsPerMinute: ptr(int64(n))}}},
		}
		var admitted atomic.Int32
		var wg sync.WaitGroup
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Admit(context.Background(), chain, []string{"projects.list"})
				var ex *limits.ExceededError
				switch {
				case err == nil:
					admitted.Add(1)
				case !errors.As(err, &ex) || ex.Selector != "projects.list":
					t.Errorf("admit: %v", err)
				}
			}()
		}
		wg.Wait()
		if admitted.Load() != n {
			t.Fatalf("admitted %d of %d racers, want exactly %d", admitted.Load(), racers, n)
		}
		// The parent counted only the admitted ones: 100-n more pass.
		for i := 0; i < 100-n; i++ {
			if _, err := c.Admit(context.Background(), chain[:1], []string{"projects.read"}); err != nil {
				t.Fatalf("parent request %d: %v", i, err)
			}
		}
		if _, err := c.Admit(context.Background(), chain[:1], []string{"projects.read"}); err == nil {
			t.Fatal("the parent's window admitted more than its limit")
		}
		clock.Advance(time.Minute) // the next window starts from zero
		if _, err := c.Admit(context.Background(), chain, []string{"projects.list"}); err != nil {
			t.Fatalf("next window: %v", err)
		}
	})
}

// A request that never releases its lease (its process died, or it hangs
// past its deadline) holds the slot only until the lease expires.
func TestAnUnreleasedLeaseExpires(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, clock *testclock.Clock) {
		chain := []limits.Owner{{ID: "key_a", Limits: limits.Set{"*": {MaxConcurrent: ptr(int64(1))}}}}
		ctx := context.Background()
		stale, err := c.Admit(ctx, chain, []string{"projects.list"})
		if err != nil {
			t.Fatal(err)
		}
		var ex *limits.ExceededError
		if _, err := c.Admit(ctx, chain, []string{"projects.list"}); !errors.As(err, &ex) || ex.Kind != "maxConcurrent" {
			t.Fatalf("second request while the slot is held: %v", err)
		}
		clock.Advance(11 * time.Second) // past the counter's 10 s lease
		fresh, err := c.Admit(ctx, chain, []string{"projects.list"})
		if err != nil {
			t.Fatalf("the expired lease still holds its slot: %v", err)
		}
		// The stale lease's late release must not free the fresh one's slot.
		if err := stale.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Admit(ctx, chain, []string{"projects.list"}); !errors.As(err, &ex) {
			t.Fatalf("a stale release freed another request's slot: %v", err)
		}
		if err := fresh.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Requests that hold no concurrency slot share one lease, whose release
// does nothing: releasing it, even many times and from many requests,
// never frees a slot another request holds.
func TestReleasingALeaseWithoutSlotsFreesNothingOfAnother(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *limits.Counter, _ *testclock.Clock) {
		ctx := context.Background()
		chain := []limits.Owner{{ID: "key_a", Limits: limits.Set{
			"files.create": {MaxConcurrent: ptr(int64(1))},
			"files.list":   {RequestsPerMinute: ptr(int64(100))},
		}}}
		holder, err := c.Admit(ctx, chain, []string{"files.create"})
		if err != nil {
			t.Fatal(err)
		}
		for _, ops := range [][]string{{"files.list"}, {"projects.list"}} {
			for range 3 {
				l, err := c.Admit(ctx, chain, ops)
				if err != nil {
					t.Fatalf("%v: %v", ops, err)
				}
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := c.Admit(ctx, chain, []string{"files.create"}); err == nil {
			t.Fatal("a release of a lease without slots freed another request's slot")
		}
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Admit(ctx, chain, []string{"files.create"}); err != nil {
			t.Fatalf("the holder's release did not free its slot: %v", err)
		}
	})
}
