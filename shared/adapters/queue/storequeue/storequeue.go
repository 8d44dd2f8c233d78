// Package storequeue is the durable embedded adapter of the queue port: a
// queue kept as items of the item store, with SQS's delivery rules
// (visibility timeouts, delays, receive counts, a dead-letter queue after too
// many receives). What is queued when the local server stops is still there
// when it starts again: a run or a webhook delivery is never lost to a
// restart, which the in-memory memqueue cannot promise.
//
// Item layout, one partition per queue:
//
//	queue#<name> | <message id>   body, visibleAt (unix ms), receives, expiresAt
//
// Message ids sort by send time, so a receive serves the oldest visible
// messages first (roughly FIFO, like a standard SQS queue). A receive is a
// conditional update of visibleAt and receives (conditional on both as read,
// so two receivers never take the same delivery); a delete or a visibility
// change is conditional on the receive count its receipt names, so a
// receipt of an earlier delivery is refused once the message was handed out
// again. A message expires after SQS's longest retention, 14 days.
package storequeue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/ids"
)

var _ queue.Queue = (*Queue)(nil)

// Retention is how long an unreceived message is kept (SQS's maximum).
const Retention = 14 * 24 * time.Hour

// poll bounds how long a waiting receive goes without looking at the store:
// it catches messages sent through another Queue value on the same store.
const poll = time.Second

const (
	attrBody      = "body"
	attrVisibleAt = "visibleAt"
	attrReceives  = "receives"
)

// Queue is a queue in an item store. It is safe for concurrent use; the
// store outlives it (Close does not close the store).
type Queue struct {
	st          store.Store
	pk          string
	now         func() time.Time
	dlq         *Queue
	maxReceives int

	mu     sync.Mutex
	wake   chan struct{} // closed and replaced whenever a message may have become visible
	closed bool
}

// Option configures New.
type Option func(*Queue)

// WithDeadLetter moves a message to dlq instead of delivering it a
// (maxReceives+1)th time, like an SQS redrive policy.
func WithDeadLetter(dlq *Queue, maxReceives int) Option {
	return func(q *Queue) { q.dlq, q.maxReceives = dlq, maxReceives }
}

// New opens the queue called name in st. Opening the same name again, in
// this process or after a restart, gives the same messages.
func New(st store.Store, name string, opts ...Option) *Queue {
	q := &Queue{st: st, pk: "queue#" + name, now: time.Now, wake: make(chan struct{})}
	for _, o := range opts {
		o(q)
	}
	return q
}

var errClosed = errors.New("storequeue: closed")

// Close makes every later call fail; waiting receivers return at once. The
// messages stay in the store.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.signalLocked()
	}
	return nil
}

func (q *Queue) signalLocked() {
	close(q.wake)
	q.wake = make(chan struct{})
}

func (q *Queue) signal() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.signalLocked()
}

// state returns whether q is closed and the channel closed at the next
// change.
func (q *Queue) state() (bool, chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed, q.wake
}

func (q *Queue) message(body []byte, now time.Time, delay time.Duration) store.Item {
	it := store.NewItem(store.Key{PK: q.pk, SK: ids.New("msg", now)})
	it[attrBody] = body
	it[attrVisibleAt] = now.Add(delay).UnixMilli()
	it[attrReceives] = int64(0)
	it[store.AttrExpiresAt] = now.Add(Retention).Unix()
	return it
}

// Send stores the batch in one transaction: all of it or none.
func (q *Queue) Send(ctx context.Context, msgs ...queue.Message) error {
	if err := queue.CheckBatch(msgs); err != nil {
		return err
	}
	if closed, _ := q.state(); closed {
		return errClosed
	}
	now := q.now()
	ops := make([]store.Op, 0, len(msgs))
	for _, m := range msgs {
		ops = append(ops, store.PutOp(q.message(append([]byte{}, m.Body...), now, m.Delay), store.NotExists()))
	}
	if err := q.st.Transact(ctx, ops); err != nil {
		return wrap("send", err)
	}
	q.signal()
	return nil
}

func wrap(op string, err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("storequeue: %s: %w: %w", op, queue.ErrUnavailable, err)
	}
	return fmt.Errorf("storequeue: %s: %w", op, err)
}

func (q *Queue) Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]queue.Received, error) {
	if max < 1 || max > 10 {
		return nil, fmt.Errorf("storequeue: receive between 1 and 10 messages, not %d", max)
	}
	deadline := time.Now().Add(wait)
	for {
		closed, wake := q.state()
		if closed {
			return nil, errClosed
		}
		got, next, err := q.take(ctx, max, visibility)
		if err != nil || len(got) > 0 {
			return got, err
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		until := now.Add(poll)
		if deadline.Before(until) {
			until = deadline
		}
		if !next.IsZero() && next.Before(until) {
			until = next
		}
		if err := queue.Wait(ctx, until, wake); err != nil {
			return nil, err
		}
	}
}

// take delivers up to max visible messages, oldest first, and returns when
// the next hidden one becomes visible (zero if none is known).
func (q *Queue) take(ctx context.Context, max int, visibility time.Duration) ([]queue.Received, time.Time, error) {
	var got []queue.Received
	var next time.Time
	after := ""
	for {
		page, err := q.st.Query(ctx, store.Query{PK: q.pk, After: after, Limit: 100})
		if err != nil {
			return got, next, wrap("receive", err)
		}
		for _, it := range page.Items {
			after = it.Key().SK
			now := q.now()
			visibleAt := time.UnixMilli(it.Int(attrVisibleAt))
			if visibleAt.After(now) {
				if next.IsZero() || visibleAt.Before(next) {
					next = visibleAt
				}
				continue
			}
			m, ok, err := q.deliver(ctx, it, now, visibility)
			if err != nil {
				return got, next, err
			}
			if ok {
				got = append(got, m)
				if len(got) == max {
					return got, next, nil
				}
			}
		}
		if !page.More {
			return got, next, nil
		}
	}
}

// deliver hands out one visible message, or moves it to the dead-letter
// queue when it has been received maxReceives times. ok is false when
// another receiver took it first, or it went to the dead-letter queue.
func (q *Queue) deliver(ctx context.Context, it store.Item, now time.Time, visibility time.Duration) (queue.Received, bool, error) {
	receives := it.Int(attrReceives)
	asRead := []store.Cond{store.AttrEquals(attrReceives, receives), store.AttrEquals(attrVisibleAt, it.Int(attrVisibleAt))}
	if q.dlq != nil && receives >= int64(q.maxReceives) {
		err := q.st.Transact(ctx, []store.Op{
			store.DeleteOp(it.Key(), asRead...),
			store.PutOp(q.dlq.message(it.Bytes(attrBody), now, 0), store.NotExists()),
		})
		switch {
		case errors.Is(err, store.ErrConditionFailed):
		case err != nil:
			return queue.Received{}, false, wrap("dead-letter", err)
		default:
			q.dlq.signal()
		}
		return queue.Received{}, false, nil
	}
	_, err := q.st.Update(ctx, it.Key(), store.Update{
		Set: map[string]any{attrVisibleAt: now.Add(visibility).UnixMilli()},
		Add: map[string]int64{attrReceives: 1},
	}, asRead...)
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		return queue.Received{}, false, nil
	case err != nil:
		return queue.Received{}, false, wrap("receive", err)
	}
	id := it.Key().SK
	return queue.Received{ID: id, Receipt: id + "#" + strconv.FormatInt(receives+1, 10),
		Body: it.Bytes(attrBody), Attempts: int(receives + 1)}, true, nil
}

// parseReceipt splits a receipt into the message's key and the receive
// count of the delivery it was issued for.
func (q *Queue) parseReceipt(receipt string) (store.Key, int64, error) {
	id, n, ok := strings.Cut(receipt, "#")
	count, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || count < 1 || !ids.Valid("msg", id) {
		return store.Key{}, 0, fmt.Errorf("%w: %q", queue.ErrInvalidReceipt, receipt)
	}
	return store.Key{PK: q.pk, SK: id}, count, nil
}

// Delete acknowledges the message of receipt. Deleting it again succeeds, as
// in SQS; a receipt of an earlier delivery does not, since another consumer
// now holds the message.
func (q *Queue) Delete(ctx context.Context, receipt string) error {
	if closed, _ := q.state(); closed {
		return errClosed
	}
	k, count, err := q.parseReceipt(receipt)
	if err != nil {
		return err
	}
	err = q.st.Delete(ctx, k, store.AttrEquals(attrReceives, count))
	if !errors.Is(err, store.ErrConditionFailed) {
		if err != nil {
			return wrap("delete", err)
		}
		return nil
	}
	switch _, err := q.st.Get(ctx, k); {
	case errors.Is(err, store.ErrNotFound):
		return nil // deleted already
	case err != nil:
		return wrap("delete", err)
	}
	return fmt.Errorf("%w: message was delivered again", queue.ErrInvalidReceipt)
}

// ChangeVisibility reschedules a message still in flight under receipt.
func (q *Queue) ChangeVisibility(ctx context.Context, receipt string, d time.Duration) error {
	if closed, _ := q.state(); closed {
		return errClosed
	}
	k, count, err := q.parseReceipt(receipt)
	if err != nil {
		return err
	}
	now := q.now()
	_, err = q.st.Update(ctx, k, store.Update{Set: map[string]any{attrVisibleAt: now.Add(d).UnixMilli()}},
		store.Exists(), store.AttrEquals(attrReceives, count), store.NumAtLeast(attrVisibleAt, now.UnixMilli()+1))
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		return fmt.Errorf("%w: message not in flight", queue.ErrInvalidReceipt)
	case err != nil:
		return wrap("change visibility", err)
	}
	q.signal()
	return nil
}
