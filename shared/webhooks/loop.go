package webhooks

import (
	"context"
	"errors"

	"platformapi/shared/queue"
)

// HandleBatch handles a batch (see queue.HandleEach) and returns the ids
// of the messages to leave in the queue.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	return queue.HandleEach(ctx, ms, w.Handle, func(err error) bool { return errors.Is(err, ErrRetry) }, w.log)
}

// Run is the worker loop of the embedded server on the webhook queue (see
// queue.Consume): each attempt is bounded by the delivery timeout, and a
// message stays hidden for six of them.
func (w *Worker) Run(ctx context.Context) {
	queue.Consume(ctx, w.repo.q, 10, 6*w.timeout, w.HandleBatch, w.log)
}
