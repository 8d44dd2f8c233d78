package queue

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Consume is a worker loop for the embedded server: it receives batches of
// up to max messages from q until ctx is done, hands each batch to handle,
// and deletes every message handle does not return as failed (those stay
// hidden until their visibility ends, then come back). A batch already
// received is finished before Consume returns, so a shutdown never leaves
// work half recorded; close the store only after Consume has returned. On
// Lambda the event source mapping plays this part.
func Consume(ctx context.Context, q Queue, max int, visibility time.Duration, handle func(context.Context, []Received) []string, log *slog.Logger) {
	for ctx.Err() == nil {
		ms, err := q.Receive(ctx, max, visibility, 20*time.Second)
		if err != nil {
			if ctx.Err() == nil {
				log.Error("queue receive failed", "error", err.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		finish := context.WithoutCancel(ctx)
		failed := handle(finish, ms)
		for _, m := range ms {
			if slices.Contains(failed, m.ID) {
				continue
			}
			if err := q.Delete(finish, m.Receipt); err != nil {
				log.Error("queue delete failed", "messageId", m.ID, "error", err.Error())
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

// HandleEach handles a batch's messages concurrently, so a slow one does not
// hold up the others, and returns the ids of those to leave in the queue
// (handle returned an error). Errors that quiet reports are expected (a
// scheduled retry) and are not logged.
func HandleEach(ctx context.Context, ms []Received, handle func(context.Context, Received) error, quiet func(error) bool, log *slog.Logger) []string {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { errs[i] = handle(ctx, m) })
	}
	wg.Wait()
	var failed []string
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed = append(failed, ms[i].ID)
		if !quiet(err) {
			log.Warn("queue message not completed", "messageId", ms[i].ID, "error", err.Error())
		}
	}
	return failed
}
