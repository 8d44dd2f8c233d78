package runs

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

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

// Run is the worker loop of the embedded server: it receives from the runs
// queue until ctx is done, deleting every message Handle is done with; runs
// already received when ctx ends are finished, not interrupted, so Run may
// take up to an attempt's timeout to return. A message stays hidden for
// twice an attempt's lease, so a live attempt is never handed to a second
// receiver.
func (w *Worker) Run(ctx context.Context) {
	q := w.repo.q
	for ctx.Err() == nil {
		ms, err := q.Receive(ctx, 4, 2*w.lease, 20*time.Second)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error("runs queue receive failed", "error", err.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		finish := context.WithoutCancel(ctx) // a shutdown finishes the runs in hand
		failed := w.HandleBatch(finish, ms)
		for _, m := range ms {
			if !slices.Contains(failed, m.ID) {
				if err := q.Delete(finish, m.Receipt); err != nil {
					w.log.Error("runs queue delete failed", "messageId", m.ID, "error", err.Error())
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
