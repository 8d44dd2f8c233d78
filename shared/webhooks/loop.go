package webhooks

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

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

// Run is the worker loop of the embedded server: it receives from the
// webhook queue until ctx is done, deleting every message Handle is done
// with. A batch already received is finished (each attempt is bounded by
// the delivery timeout) before Run returns, so a shutdown never leaves an
// attempt half recorded; close the store only after Run has returned.
func (w *Worker) Run(ctx context.Context) {
	q := w.repo.q
	for ctx.Err() == nil {
		ms, err := q.Receive(ctx, 10, 6*w.timeout, 20*time.Second)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error("webhook queue receive failed", "error", err.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		finish := context.WithoutCancel(ctx)
		failed := w.HandleBatch(finish, ms)
		for _, m := range ms {
			if !slices.Contains(failed, m.ID) {
				if err := q.Delete(finish, m.Receipt); err != nil {
					w.log.Error("webhook queue delete failed", "messageId", m.ID, "error", err.Error())
				}
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
