// Package example is a throw-away group's domain: it queues a note and its
// worker marks it done.
package example

import (
	"context"
	"log/slog"
	"time"

	"platformapi/shared/ports"
	"platformapi/shared/queue"
	"platformapi/shared/work"
)

// Worker handles the examples queue.
type Worker struct{ Logger *slog.Logger }

// HandleBatch handles every message.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	for _, m := range ms {
		w.Logger.Info("example", "id", m.ID)
	}
	return nil
}

// Work is the worker on q.
func (w *Worker) Work(q queue.Queue) work.Worker {
	return work.Worker{Name: work.Examples.Consumer, Queue: q, Handle: w.HandleBatch, Batch: 10, Visibility: time.Minute}
}

// GroupWork is the group's work on p: its worker on its queue.
func GroupWork(p ports.Ports) ports.Work {
	return ports.Work{Workers: []work.Worker{(&Worker{Logger: p.Log(work.Examples.Consumer)}).Work(p.Queue(work.Examples))}}
}
