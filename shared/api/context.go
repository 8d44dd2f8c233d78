package api

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/shared/credits"
)

// requestContext is the context every request carries below edge, kept in
// its requestState. It answers the request's values itself (its state and
// its credits.Request) and, once enforce arms it, the request's deadline:
// what context.WithValue twice, context.WithTimeout, the ledger's request mark
// and a second Request.WithContext made per request before, eleven
// allocations and a runtime timer (docs/benchmarks.md).
//
// The deadline costs no timer until something asks for Done: Err compares
// the clock with the deadline, and Done makes a real context.WithDeadline
// of the parent (timed), which from then on answers Done, Err and the
// values the context package itself looks up, so that a child context
// attaches to it as to any other. Nothing on a read's path asks for Done.
//
// arm refuses once Done has been asked for while unarmed (the channel
// handed out then would never see the deadline); enforce then makes a
// context of its own, as before.
type requestContext struct {
	parent context.Context
	st     *requestState
	// deadline is set by arm before the context reaches anything that
	// runs beside the request; zero until then, and on every request
	// enforce does not serve.
	deadline time.Time

	mu sync.Mutex
	// timed is the real context made for Done; nil until then.
	timed atomic.Pointer[timedContext]
	// doneSeen: Done was asked for before arm; ended: enforce is done
	// with the request (as cancel of its WithTimeout was).
	doneSeen bool
	ended    atomic.Bool
}

type timedContext struct {
	context.Context
	cancel context.CancelFunc
}

// arm gives the request its deadline, unless Done was already asked for.
func (c *requestContext) arm(deadline time.Time) bool {
	if c.parent == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.doneSeen || c.timed.Load() != nil || c.ended.Load() {
		return false
	}
	c.deadline = deadline
	return true
}

// end cancels the context, as the cancel of a WithTimeout would: work the
// request started and left running sees it done.
func (c *requestContext) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended.Store(true)
	if t := c.timed.Load(); t != nil {
		t.cancel()
	}
}

func (c *requestContext) Deadline() (time.Time, bool) {
	if t := c.timed.Load(); t != nil {
		return t.Deadline()
	}
	d, ok := c.parent.Deadline()
	if c.deadline.IsZero() || ok && d.Before(c.deadline) {
		return d, ok
	}
	return c.deadline, true
}

func (c *requestContext) Done() <-chan struct{} {
	if t := c.timed.Load(); t != nil {
		return t.Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return t.Done()
	}
	if c.deadline.IsZero() && !c.ended.Load() {
		// Unarmed: the parent's channel is this context's, as a
		// context.WithValue's would be.
		c.doneSeen = true
		return c.parent.Done()
	}
	t := &timedContext{}
	if c.deadline.IsZero() {
		t.Context, t.cancel = context.WithCancel(c.parent)
	} else {
		t.Context, t.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	if c.ended.Load() {
		t.cancel()
	}
	c.timed.Store(t)
	return t.Done()
}

func (c *requestContext) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.ended.Load() {
		return context.Canceled
	}
	if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *requestContext) Value(key any) any {
	switch key {
	case keyState:
		return c.st
	case credits.RequestKey:
		return c.st
	}
	if t := c.timed.Load(); t != nil {
		return t.Value(key)
	}
	return c.parent.Value(key)
}

// detachedContext is context.WithoutCancel of a request's context, made
// without an allocation: its values, never its deadline or cancellation.
type detachedContext struct{ c *requestContext }

func (detachedContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detachedContext) Done() <-chan struct{}       { return nil }
func (detachedContext) Err() error                  { return nil }
func (d detachedContext) Value(key any) any         { return d.c.Value(key) }

// withoutCancel is context.WithoutCancel(ctx), without its allocation when
// ctx is a request's own context.
func withoutCancel(ctx context.Context) context.Context {
	if c, ok := ctx.(*requestContext); ok {
		return detachedContext{c}
	}
	return context.WithoutCancel(ctx)
}
