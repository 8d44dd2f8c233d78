package runs

import (
	"context"
	"errors"
	"sync"

	"platformapi/shared/queue"
)

// HandleBatch handles messages concurrently (a long run must not hold up
// the others) and returns the ids of those to leave in the queue.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { errs[i] = w.Handle(ctx, m) })
	}
	wg.Wait()
	var failed []string
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed = append(failed, ms[i].ID)
		if !errors.Is(err, ErrRetry) && !errors.Is(err, ErrInProgress) {
			w.log.Warn("run message not completed", "messageId", ms[i].ID, "error", err.Error())
		}
	}
	return failed
}

// Run is the worker loop of the embedded server on the runs queue (see
// queue.Consume): runs already received when ctx ends are finished, not
// interrupted, so Run may take up to an attempt's timeout to return. A
// message stays hidden for twice an attempt's lease, so a live attempt is
// never handed to a second receiver.
func (w *Worker) Run(ctx context.Context) {
	queue.Consume(ctx, w.repo.q, 4, 2*w.lease, w.HandleBatch, w.log)
}
