// Package testclock is the settable clock of the tests. A test hands the
// same Clock's Now to the store, the repository and the service it builds,
// then moves time for all of them at once to expire keys, windows, leases,
// claims and holds, rather than sleeping or asserting on the wall clock.
package testclock

import (
	"sync"
	"time"
)

// Clock stands still until a test sets or advances it. It is safe for
// concurrent use: the code under test reads it from its own goroutines
// (workers, sweepers, the HTTP server) while the test moves it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New is a clock standing at t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now is the time the clock stands at; its method value is the func() time.Time
// that stores, repositories and services take.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, backwards too.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
