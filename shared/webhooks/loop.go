package webhooks

import (
	"context"
	"errors"
	"sync"

	"platformapi/shared/queue"
)

// HandleBatch handles messages concurrently (a batch is at most ten, and a
// slow receiver must not hold up the others) and returns the ids of those
// to leave in the queue.
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
		if !errors.Is(err, ErrRetry) {
			w.log.Warn("webhook delivery not completed", "messageId", ms[i].ID, "error", err.Error())
		}
	}
	return failed
}

// Run is the worker loop of the embedded server on the webhook queue (see
// queue.Consume): each attempt is bounded by the delivery timeout, and a
// message stays hidden for six of them.
func (w *Worker) Run(ctx context.Context) {
	queue.Consume(ctx, w.repo.q, 10, 6*w.timeout, w.HandleBatch, w.log)
}
