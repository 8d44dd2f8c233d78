package runs

import (
	"context"
	"errors"

	"platformapi/shared/queue"
)

// HandleBatch handles a batch (see queue.HandleEach) and returns the ids
// of the messages to leave in the queue.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	return queue.HandleEach(ctx, ms, w.Handle, func(err error) bool { return errors.Is(err, ErrRetry) || errors.Is(err, ErrInProgress) }, w.log)
}

// Run is the worker loop of the embedded server on the runs queue (see
// queue.Consume): runs already received when ctx ends are finished, not
// interrupted, so Run may take up to an attempt's timeout to return. A
// message stays hidden for twice an attempt's lease, so a live attempt is
// never handed to a second receiver.
func (w *Worker) Run(ctx context.Context) {
	queue.Consume(ctx, w.repo.q, 4, 2*w.lease, w.HandleBatch, w.log)
}
