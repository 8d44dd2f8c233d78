package api

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/shared/groups/credits"
)

// requestContext is the context every request carries below edge, kept in
// its requestState. It answers the request's values itself (its state and
// its credits.Cause) and, once enforce arms it, the request's deadline:
// what context.WithValue twice, context.WithTimeout, the ledger's request mark
// and a second Request.WithContext made per request before, with their
// allocations and a runtime timer. BenchmarkRequestContext
// (context_internal_test.go) measures both ways, edge to answer: 0
// allocations against the context package's 7 (480 B), 0.9 against 4.5 µs
// of CPU on the development machine (2026-11-29); BenchmarkRequest
// (shared/harness/bench) shows the whole request (docs/benchmarks.md).
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
	// end cancels it with errRequestEnded as its cause; stop is the
	// deadline's own cancel (a no-op where there is none).
	end  context.CancelCauseFunc
	stop context.CancelFunc
}

// errRequestEnded is the cause of a request context that end cancelled,
// which context.Cause tells apart from a client gone (the server's own
// cancellation) and from the deadline.
var errRequestEnded = errors.New("api: the request had been answered")

// ctxKey are the kernel's context keys: the request's state (answered by
// requestContext itself) and the idempotent call's id (CallID).
type ctxKey int

const (
	keyState ctxKey = iota
	keyCallID
)

// stateFrom is the request's state: at once from the request's own context,
// by its key from any other (a child context, or one enforce made).
func stateFrom(ctx context.Context) *requestState {
	if c, ok := ctx.(*requestContext); ok {
		return c.st
	}
	st, _ := ctx.Value(keyState).(*requestState)
	return st
}

// bind makes st's own context the request's context below parent: it
// answers st, and st as the ledger's request (credits.CauseOf).
func (st *requestState) bind(parent context.Context) *requestContext {
	st.ctx.parent, st.ctx.st = parent, st
	st.cause = credits.ForRequest(st)
	return &st.ctx
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
		t.end(errRequestEnded)
		t.stop()
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
	t := &timedContext{stop: func() {}}
	t.Context, t.end = context.WithCancelCause(c.parent)
	if !c.deadline.IsZero() {
		t.Context, t.stop = context.WithDeadline(t.Context, c.deadline)
	}
	if c.ended.Load() {
		t.end(errRequestEnded)
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
	case credits.CauseKey:
		return &c.st.cause
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
