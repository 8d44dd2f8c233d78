package runs

import (
	"context"
	"errors"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/work"
)

// HandleBatch handles a batch (see queue.HandleEach) and returns the ids
// of the messages to leave in the queue.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	return queue.HandleEach(ctx, ms, w.Handle, func(err error) bool { return errors.Is(err, ErrRetry) || errors.Is(err, ErrInProgress) }, w.log)
}

// Work is the worker on the runs queue: runs already received when the
// process stops are finished, not interrupted, so stopping may take up to
// an attempt's timeout. A received message stays hidden for twice an
// attempt's lease, so a live attempt is never handed to a second receiver.
func (w *Worker) Work() work.Worker {
	return work.Worker{Name: Queue.Consumer, Queue: w.repo.q, Handle: w.HandleBatch, Batch: 4, Visibility: 2 * w.lease}
}
