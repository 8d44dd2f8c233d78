package testclock_test

import (
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/testclock"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestTheClockMovesOnlyWhenTheTestMovesIt: New, Set and Advance are the only
// ways its time changes, and every reader sees where they put it.
func TestTheClockMovesOnlyWhenTheTestMovesIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		move func(c *testclock.Clock)
		want time.Time
	}{
		{"standing still", func(*testclock.Clock) {}, start},
		{"advanced", func(c *testclock.Clock) { c.Advance(90 * time.Second) }, start.Add(90 * time.Second)},
		{"advanced twice", func(c *testclock.Clock) { c.Advance(time.Hour); c.Advance(time.Minute) }, start.Add(time.Hour + time.Minute)},
		{"set back", func(c *testclock.Clock) { c.Set(start.Add(-24 * time.Hour)) }, start.Add(-24 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testclock.New(start)
			now := c.Now // as the code under test holds it
			tc.move(c)
			if got := now(); !got.Equal(tc.want) {
				t.Errorf("Now() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTheClockIsSafeToReadWhileATestMovesIt: readers on other goroutines
// see every advance exactly once (run with -race for the data-race half).
func TestTheClockIsSafeToReadWhileATestMovesIt(t *testing.T) {
	c := testclock.New(start)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Advance(time.Second)
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(400*time.Second); !got.Equal(want) {
		t.Errorf("after 400 advances of a second: %v, want %v", got, want)
	}
}
