package webhooks

import (
	"context"
	"errors"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/work"
)

// HandleBatch handles a batch (see queue.HandleEach) and returns the ids
// of the messages to leave in the queue.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	return queue.HandleEach(ctx, ms, w.Handle, func(err error) bool { return errors.Is(err, ErrRetry) }, w.log)
}

// Work is the worker on the webhook queue: each attempt is bounded by the
// delivery timeout, and a received message stays hidden for six of them.
func (w *Worker) Work() work.Worker {
	return work.Worker{Name: work.Webhooks.Consumer, Queue: w.repo.q, Handle: w.HandleBatch, Batch: 10, Visibility: 6 * w.timeout}
}
