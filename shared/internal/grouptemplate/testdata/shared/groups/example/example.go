// Package example is a throw-away group's domain: it queues a note and its
// worker marks it done in the table.
package example

import (
	"context"
	"log/slog"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/work"
)

// Queue is the group's queue.
var Queue = work.Queue{Name: "examples", Env: "EXAMPLES", Stack: "Examples", MaxReceives: 3, Consumer: "examples-worker",
	MaxAge: time.Hour, Stuck: "the examples worker is not draining the queue", DeadLettered: "An example failed repeatedly."}

// Deploy is what the group deploys: its queue, its function and its
// worker's.
var Deploy = deploy.Unit{
	Queues: []work.Queue{Queue},
	Functions: []deploy.Function{
		{Name: "examples", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.Send(Queue))},
		{Name: "examples-worker", MemoryMiB: 256, Timeout: 60 * time.Second, Uses: deploy.Uses{deploy.UseTable, deploy.Consume(Queue)}, BatchSize: 10},
	},
}

// Done is where the worker marks the note whose id is the message's body.
func Done(id string) store.Key { return store.Key{PK: "example", SK: id} }

// Worker handles the examples queue.
type Worker struct {
	Store  store.Store
	Logger *slog.Logger
}

// HandleBatch marks every message's note done; a message whose mark failed
// is delivered again.
func (w *Worker) HandleBatch(ctx context.Context, ms []queue.Received) []string {
	var failed []string
	for _, m := range ms {
		if err := w.Store.Put(ctx, store.NewItem(Done(string(m.Body)))); err != nil {
			w.Logger.Warn("example not marked", "id", m.ID, "err", err)
			failed = append(failed, m.ID)
		}
	}
	return failed
}

// Work is the worker on q.
func (w *Worker) Work(q queue.Queue) work.Worker {
	return work.Worker{Name: Queue.Consumer, Queue: q, Handle: w.HandleBatch, Batch: 10, Visibility: time.Minute}
}

// WorkDeps are what the group's work uses: the table, the examples queue
// and the logger.
type WorkDeps struct {
	Store  store.Store
	Queue  queue.Queue
	Logger *slog.Logger
}

// GroupWork is the group's work: its worker on its queue.
func GroupWork(d WorkDeps) ports.Work {
	return ports.Work{Workers: []work.Worker{(&Worker{Store: d.Store, Logger: ports.Log(d.Logger, Queue.Consumer)}).Work(d.Queue)}}
}
