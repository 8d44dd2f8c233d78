package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platformapi/shared/groups/credits"
)

type parentKey struct{}

func armed(t *testing.T, parent context.Context, deadline time.Time) *requestContext {
	t.Helper()
	st := &requestState{id: "req_1"}
	if !st.bind(parent).arm(deadline) {
		t.Fatal("a fresh request context refused its deadline")
	}
	return &st.ctx
}

func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// The request context stands for context.WithValue, context.WithTimeout
// and credits.WithRequest: it must answer as they did, whether or not
// anything asked for its Done channel.
func TestARequestContextAnswersAsTheContextsItReplaces(t *testing.T) {
	parent := context.WithValue(context.Background(), parentKey{}, "v")
	for _, askDone := range []bool{false, true} {
		c := armed(t, parent, time.Now().Add(time.Hour))
		if askDone && isDone(c) {
			t.Fatal("done before its deadline")
		}
		if c.Value(parentKey{}) != "v" || stateFrom(c) != c.st || credits.CauseOf(c).Request() != credits.Request(c.st) {
			t.Fatalf("askDone %v: values %v %v %v", askDone, c.Value(parentKey{}), stateFrom(c), credits.CauseOf(c))
		}
		if d, ok := c.Deadline(); !ok || !d.Equal(c.deadline) {
			t.Fatalf("askDone %v: deadline %v %v", askDone, d, ok)
		}
		child, cancelChild := context.WithCancel(c)
		defer cancelChild()
		if credits.CauseOf(child).Request() != credits.Request(c.st) {
			t.Fatalf("askDone %v: a child context lost the request's cause", askDone)
		}
		if c.Err() != nil || child.Err() != nil {
			t.Fatalf("askDone %v: live context reports %v / %v", askDone, c.Err(), child.Err())
		}
		c.end()
		if !errors.Is(c.Err(), context.Canceled) || !isDone(c) || !isDone(child) || !errors.Is(child.Err(), context.Canceled) {
			t.Fatalf("askDone %v: after end: %v, child %v", askDone, c.Err(), child.Err())
		}
		if c.Value(parentKey{}) != "v" || stateFrom(c) != c.st {
			t.Fatalf("askDone %v: values lost after end", askDone)
		}
	}
}

func TestARequestContextPastItsDeadlineIsDoneWithDeadlineExceeded(t *testing.T) {
	for _, askDone := range []bool{false, true} {
		c := armed(t, context.Background(), time.Now().Add(-time.Millisecond))
		if askDone {
			<-c.Done()
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("askDone %v: err %v", askDone, c.Err())
		}
		child, cancel := context.WithCancel(c)
		if !isDone(child) || !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Fatalf("askDone %v: child %v", askDone, child.Err())
		}
		cancel()
		c.end()
	}
}

func TestARequestContextIsCancelledWithItsParent(t *testing.T) {
	for _, askDone := range []bool{false, true} {
		parent, cancel := context.WithCancel(context.Background())
		c := armed(t, parent, time.Now().Add(time.Hour))
		if askDone {
			_ = c.Done()
		}
		cancel()
		if !errors.Is(c.Err(), context.Canceled) || !isDone(c) {
			t.Fatalf("askDone %v: err %v", askDone, c.Err())
		}
		c.end()
	}
}

// A Done channel handed out before the deadline was set cannot learn it:
// arm then refuses, and enforce makes a context of its own.
func TestARequestContextRefusesADeadlineOnceItsDoneWasAskedFor(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &requestState{}
	st.bind(parent)
	if st.ctx.Done() != parent.Done() {
		t.Fatal("an unarmed context is not its parent's Done")
	}
	if st.ctx.arm(time.Now().Add(time.Hour)) {
		t.Fatal("armed after Done was handed out")
	}
	if _, ok := st.ctx.Deadline(); ok {
		t.Fatal("a refused deadline was kept")
	}
	if (&requestContext{}).arm(time.Now()) {
		t.Fatal("a context outside edge (no parent) was armed")
	}
}

func TestADetachedRequestContextKeepsValuesAndDropsCancellation(t *testing.T) {
	c := armed(t, context.WithValue(context.Background(), parentKey{}, "v"), time.Now().Add(-time.Second))
	c.end()
	d := withoutCancel(c)
	if d.Err() != nil || d.Done() != nil || d.Value(parentKey{}) != "v" || stateFrom(d) != c.st {
		t.Fatalf("detached: err %v, values %v %v", d.Err(), d.Value(parentKey{}), stateFrom(d))
	}
	if _, ok := d.Deadline(); ok {
		t.Fatal("detached context has a deadline")
	}
}

// BenchmarkRequestContext is what a request's context costs from edge to
// its answer, the way requestContext makes it and the way the context
// package would: the state and the ledger's cause as values, the request's
// deadline, the lookups the request path makes (its state, its cause, Err,
// a detached copy for work that outlives it) and the end of the request.
// requestContext's doc comment quotes its figures.
func BenchmarkRequestContext(b *testing.B) {
	parent := context.Background()
	req := httptest.NewRequest("GET", "/v1/credits/balance", nil)
	st := &requestState{id: "req_1"}
	b.Run("requestContext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			*st = requestState{id: "req_1"}
			r := req.WithContext(st.bind(parent))
			if !st.ctx.arm(time.Now().Add(time.Minute)) {
				b.Fatal("refused its deadline")
			}
			ctx := r.Context()
			if stateFrom(ctx) != st || credits.CauseOf(ctx).Request() == nil || ctx.Err() != nil || withoutCancel(ctx) == nil {
				b.Fatal("lookups")
			}
			st.ctx.end()
		}
	})
	b.Run("context package", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			*st = requestState{id: "req_1"}
			r := req.WithContext(context.WithValue(parent, keyState, st))
			ctx, cancel := context.WithTimeout(credits.WithRequest(r.Context(), st), time.Minute)
			r = r.WithContext(ctx)
			ctx = r.Context()
			if stateFrom(ctx) != st || credits.CauseOf(ctx).Request() == nil || ctx.Err() != nil || context.WithoutCancel(ctx) == nil {
				b.Fatal("lookups")
			}
			cancel()
		}
	})
}

// Why a request's context ended is its cause, for the log of a failure on
// it: answered already (end), its deadline, or the server's cancellation.
func TestARequestContextsCauseSaysWhyItEnded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    func(c *requestContext, cancelParent context.CancelFunc)
		parent bool
		want   error
	}{
		{"answered", func(c *requestContext, _ context.CancelFunc) { c.end() }, false, errRequestEnded},
		{"the server cancelled it", func(_ *requestContext, cancel context.CancelFunc) { cancel() }, false, context.Canceled},
		{"past its deadline", func(c *requestContext, _ context.CancelFunc) { <-c.Done() }, true, context.DeadlineExceeded},
	} {
		parent, cancel := context.WithCancel(context.Background())
		deadline := time.Now().Add(time.Hour)
		if tc.parent {
			deadline = time.Now().Add(time.Millisecond)
		}
		c := armed(t, parent, deadline)
		child, cancelChild := context.WithTimeout(c, time.Hour) // as an SDK call's
		tc.end(c, cancel)
		<-child.Done()
		if got := context.Cause(child); !errors.Is(got, tc.want) {
			t.Errorf("%s: cause %v, want %v", tc.name, got, tc.want)
		}
		if got := context.Cause(c); !errors.Is(got, tc.want) {
			t.Errorf("%s: the request context's own cause %v, want %v", tc.name, got, tc.want)
		}
		cancelChild()
		cancel()
		c.end()
	}
}

// A 5xx on a cancelled context logs why the request's context ended, or
// that it had not: then the context cancelled was another's.
func TestAFailureOnACancelledContextLogsItsCause(t *testing.T) {
	var buf bytes.Buffer
	for _, tc := range []struct {
		name         string
		askDone, end bool
		want         string
	}{
		{"the request's own, ended", true, true, `"contextCause":"` + errRequestEnded.Error() + `"`},
		{"the request's own, ended before anything asked for Done", false, true, `"contextCause":"` + errRequestEnded.Error() + `"`},
		{"another's", true, false, `"contextCause":"none: the request's context is live"`},
	} {
		buf.Reset()
		st := &requestState{id: "req_1", base: slog.New(slog.NewJSONHandler(&buf, nil))}
		c := st.bind(context.Background())
		c.arm(time.Now().Add(time.Hour))
		if tc.askDone {
			_ = c.Done() // as every store call's context.WithTimeout asks
		}
		if tc.end {
			c.end()
		}
		logFailure(c, "internal_error", fmt.Errorf("credits: hold: %w", context.Canceled))
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("%s: logged %s, want %s", tc.name, buf.String(), tc.want)
		}
	}
}
