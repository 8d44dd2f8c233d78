// Package queuetest is the conformance suite of the queue port: memqueue and
// sqsqueue run the same delivery rules. Timings are whole seconds, SQS's
// granularity. It must test the port only, never an adapter's internals.
package queuetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/queue"
)

// Harness makes fresh queues.
type Harness struct {
	// New returns an empty queue whose messages move to the returned
	// dead-letter queue instead of being delivered more than maxReceives
	// times. It registers its own cleanup.
	New func(t *testing.T, maxReceives int) (q, dlq queue.Queue)
	// Durable, when set, gives queues whose messages outlive the process
	// (nil for memqueue, which keeps nothing): each call of open returns
	// the queues on the same storage, as a restarted process would, and
	// stop ends them as that process's exit would (closing its storage).
	Durable func(t *testing.T, maxReceives int) (open func() (q, dlq queue.Queue, stop func()))
}

type rule struct {
	name string
	run  func(t *testing.T, q, dlq queue.Queue)
}

// RunConformance runs every rule, in parallel since most of them wait.
func RunConformance(t *testing.T, h Harness) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			q, dlq := h.New(t, maxReceives)
			r.run(t, q, dlq)
		})
	}
	t.Run("UnacknowledgedMessagesSurviveARestart", func(t *testing.T) {
		if h.Durable == nil {
			t.Skip("the adapter keeps messages in memory only")
		}
		t.Parallel()
		survivesARestart(t, h.Durable(t, maxReceives))
	})
}

const maxReceives = 2

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func send(t *testing.T, q queue.Queue, msgs ...queue.Message) {
	t.Helper()
	if err := q.Send(ctx(t), msgs...); err != nil {
		t.Fatal(err)
	}
}

func text(bodies ...string) []queue.Message {
	var msgs []queue.Message
	for _, b := range bodies {
		msgs = append(msgs, queue.Message{Body: []byte(b)})
	}
	return msgs
}

func receive(t *testing.T, q queue.Queue, max int, visibility, wait time.Duration) []queue.Received {
	t.Helper()
	got, err := q.Receive(ctx(t), max, visibility, wait)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// receiveOne waits for exactly one message.
func receiveOne(t *testing.T, q queue.Queue, visibility time.Duration) queue.Received {
	t.Helper()
	got := receive(t, q, 1, visibility, 10*time.Second)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	return got[0]
}

// wantNone checks nothing is delivered within wait.
func wantNone(t *testing.T, q queue.Queue, wait time.Duration) {
	t.Helper()
	if got := receive(t, q, 10, time.Minute, wait); len(got) != 0 {
		t.Fatalf("received %d messages (first %q); want none", len(got), got[0].Body)
	}
}

// drain receives until n messages arrived, since one receive may return
// fewer than are waiting.
func drain(t *testing.T, q queue.Queue, n int) []queue.Received {
	t.Helper()
	var all []queue.Received
	deadline := time.Now().Add(20 * time.Second)
	for len(all) < n && time.Now().Before(deadline) {
		all = append(all, receive(t, q, 10, time.Minute, time.Second)...)
	}
	if len(all) != n {
		t.Fatalf("received %d messages; want %d", len(all), n)
	}
	return all
}

func bodies(got []queue.Received) []string {
	var out []string
	for _, m := range got {
		out = append(out, string(m.Body))
	}
	slices.Sort(out)
	return out
}

func wantInvalidReceipt(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, queue.ErrInvalidReceipt) {
		t.Fatalf("err = %v; want ErrInvalidReceipt", err)
	}
}

func names(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("m%02d", i))
	}
	return out
}
