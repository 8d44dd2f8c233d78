// Package queue is the message-queue port used by workers (webhook delivery,
// durable runs): at-least-once delivery with a visibility timeout and a
// dead-letter destination after too many receives. Adapters: storequeue
// (embedded, durable in the item store), memqueue (in-process, for tests)
// and sqsqueue (SQS). All must pass queuetest.
package queue

import (
	"context"
	"errors"
	"time"
)

var (
	ErrUnavailable = errors.New("queue: backend unavailable")
	// ErrInvalidReceipt means the message was already deleted or its
	// visibility lapsed and it was handed to another consumer.
	ErrInvalidReceipt = errors.New("queue: invalid receipt")
)

// Message is one message to send.
type Message struct {
	Body  []byte
	Delay time.Duration // hidden from receivers for this long
}

// Received is one delivered message.
type Received struct {
	ID       string
	Receipt  string // handle for Delete and ChangeVisibility
	Body     []byte
	Attempts int // 1 on first delivery
}

// Queue is the queue port.
type Queue interface {
	// Send enqueues messages (at most 10 per call, like SQS batches).
	Send(ctx context.Context, msgs ...Message) error
	// Receive returns up to max visible messages and hides them for
	// visibility; it waits at most wait for the first one.
	Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]Received, error)
	// Delete acknowledges a message.
	Delete(ctx context.Context, receipt string) error
	// ChangeVisibility reschedules a received message (a retry with backoff).
	ChangeVisibility(ctx context.Context, receipt string, d time.Duration) error
	Close() error
}

// Wait blocks a polling receiver until until, a wake-up (a closed wake
// channel: a message may have become visible), or ctx's end, whose error it
// returns. Both embedded adapters wait this way.
func Wait(ctx context.Context, until time.Time, wake <-chan struct{}) error {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
	case <-t.C:
	}
	return nil
}
