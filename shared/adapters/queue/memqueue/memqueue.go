// Package memqueue is the embedded adapter of the queue port: an in-process
// queue with SQS's delivery rules (visibility timeouts, delays, receive
// counts, a dead-letter queue after too many receives), so workers behave the
// same in the local server as on Lambda. It keeps messages in memory only and
// must never be mistaken for durable storage: what is queued when the process
// stops is lost, as with any in-flight Lambda retry.
package memqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/queue"
)

var _ queue.Queue = (*Queue)(nil)

// Queue is an in-memory queue. It is safe for concurrent use.
type Queue struct {
	mu          sync.Mutex
	msgs        []*message // in send order
	byReceipt   map[string]*message
	nextID      int
	wake        chan struct{} // closed and replaced whenever a message may have become visible
	dlq         *Queue
	maxReceives int
	closed      bool
}

type message struct {
	id       string
	body     []byte
	visible  time.Time // hidden until then
	attempts int
	receipt  string // of the latest delivery
}

// Option configures New.
type Option func(*Queue)

// WithDeadLetter moves a message to dlq instead of delivering it a
// (maxReceives+1)th time, like an SQS redrive policy.
func WithDeadLetter(dlq *Queue, maxReceives int) Option {
	return func(q *Queue) { q.dlq, q.maxReceives = dlq, maxReceives }
}

func New(opts ...Option) *Queue {
	q := &Queue{byReceipt: map[string]*message{}, wake: make(chan struct{})}
	for _, o := range opts {
		o(q)
	}
	return q
}

// Close makes every later call fail; waiting receivers return at once.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.signal()
	}
	return nil
}

var errClosed = errors.New("memqueue: closed")

// signal wakes waiting receivers; callers hold q.mu.
func (q *Queue) signal() {
	close(q.wake)
	q.wake = make(chan struct{})
}

func (q *Queue) Send(ctx context.Context, msgs ...queue.Message) error {
	if err := queue.CheckBatch(msgs); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return errClosed
	}
	now := time.Now()
	for _, m := range msgs {
		q.enqueue(append([]byte{}, m.Body...), now.Add(m.Delay))
	}
	q.signal()
	return nil
}

func (q *Queue) enqueue(body []byte, visible time.Time) {
	q.nextID++
	q.msgs = append(q.msgs, &message{id: "msg-" + strconv.Itoa(q.nextID), body: body, visible: visible})
}

func (q *Queue) Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]queue.Received, error) {
	if max < 1 || max > 10 {
		return nil, fmt.Errorf("memqueue: receive between 1 and 10 messages, not %d", max)
	}
	deadline := time.Now().Add(wait)
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, errClosed
		}
		got, next := q.take(max, visibility)
		wake := q.wake
		q.mu.Unlock()
		now := time.Now()
		if len(got) > 0 || !now.Before(deadline) {
			return got, nil
		}
		until := deadline
		if !next.IsZero() && next.Before(until) {
			until = next
		}
		if err := queue.Wait(ctx, until, wake); err != nil {
			return nil, err
		}
	}
}

// take delivers up to max visible messages and returns when the next hidden
// one becomes visible (zero if none is hidden). Callers hold q.mu.
func (q *Queue) take(max int, visibility time.Duration) ([]queue.Received, time.Time) {
	now := time.Now()
	var got []queue.Received
	var next time.Time
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		switch {
		case m.visible.After(now):
			if next.IsZero() || m.visible.Before(next) {
				next = m.visible
			}
		case len(got) == max:
		case q.dlq != nil && m.attempts >= q.maxReceives:
			delete(q.byReceipt, m.receipt)
			q.dlq.deadLetter(m.body)
			continue
		default:
			delete(q.byReceipt, m.receipt)
			m.attempts++
			m.receipt = m.id + "#" + strconv.Itoa(m.attempts)
			m.visible = now.Add(visibility)
			q.byReceipt[m.receipt] = m
			got = append(got, queue.Received{ID: m.id, Receipt: m.receipt, Body: append([]byte{}, m.body...), Attempts: m.attempts})
			if next.IsZero() || m.visible.Before(next) {
				next = m.visible
			}
		}
		kept = append(kept, m)
	}
	clear(q.msgs[len(kept):])
	q.msgs = kept
	return got, next
}

func (q *Queue) deadLetter(body []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.enqueue(body, time.Now())
	q.signal()
}

// Delete acknowledges the message of receipt. Deleting it again succeeds, as
// in SQS; a receipt of an earlier delivery does not, since another consumer
// now holds the message.
func (q *Queue) Delete(ctx context.Context, receipt string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	m, err := q.lookup(receipt)
	if err != nil || m == nil {
		return err
	}
	delete(q.byReceipt, receipt)
	for i, x := range q.msgs {
		if x == m {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			break
		}
	}
	return nil
}

func (q *Queue) ChangeVisibility(ctx context.Context, receipt string, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	m, err := q.lookup(receipt)
	if err != nil {
		return err
	}
	now := time.Now()
	if m == nil || !m.visible.After(now) {
		return fmt.Errorf("%w: message not in flight", queue.ErrInvalidReceipt)
	}
	m.visible = now.Add(d)
	q.signal()
	return nil
}

// lookup finds the message a receipt was issued for: nil with no error when
// it has been deleted, ErrInvalidReceipt when it was never issued or the
// message was delivered again since.
func (q *Queue) lookup(receipt string) (*message, error) {
	if q.closed {
		return nil, errClosed
	}
	if m, ok := q.byReceipt[receipt]; ok {
		return m, nil
	}
	id, n, ok := parseReceipt(receipt)
	if !ok || id > q.nextID {
		return nil, fmt.Errorf("%w: %q", queue.ErrInvalidReceipt, receipt)
	}
	for _, m := range q.msgs {
		if m.id == "msg-"+strconv.Itoa(id) && m.attempts != n {
			return nil, fmt.Errorf("%w: message was delivered again", queue.ErrInvalidReceipt)
		}
	}
	return nil, nil
}

func parseReceipt(r string) (id, attempt int, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(r, "msg-"), "#")
	id, err1 := strconv.Atoi(a)
	attempt, err2 := strconv.Atoi(b)
	return id, attempt, found && strings.HasPrefix(r, "msg-") && err1 == nil && err2 == nil
}
