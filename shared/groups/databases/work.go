package databases

import (
	"log/slog"
	"platformapi/shared/adapters/queue"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
)

// Queue is the databases queue: its transfers (snapshots, restores,
// validations). One that failed three times fails for a reason a fourth
// attempt will not fix.
var Queue = work.Queue{Name: "databases", Env: "DATABASES", Stack: "Databases", MaxReceives: 3, Consumer: "databases-worker",
	MaxAge: 4 * time.Hour, Stuck: "the oldest database transfer is older than three attempts and their visibility timeouts: the databases worker is not draining the queue",
	DeadLettered: "A database transfer job failed repeatedly and waits in the dead-letter queue."}

// WorkerFunction is the transfer worker's Lambda. One transfer per
// invocation: a snapshot or a validation of a 256 MiB database takes
// minutes and its /tmp space. The timeout stays above the worker's job
// timeout (DefaultJobTimeout, 10 minutes).
var WorkerFunction = deploy.Function{Name: Queue.Consumer, MemoryMiB: 2048, Timeout: 12 * time.Minute,
	Uses:      deploy.Uses{deploy.UseTable, deploy.Consume(Queue), deploy.UseArchives, deploy.UseArchiveSecret, deploy.Send(work.Webhooks)},
	BatchSize: 1, EphemeralMiB: 4096}

// WorkDeps are what the databases group's work uses: the service (nil: a
// process that serves no managed databases has no worker), the webhook
// publisher, the databases queue and the logger.
type WorkDeps struct {
	Service *Service
	Events  Publisher
	Queue   queue.Queue
	Logger  *slog.Logger
}

// Work is the databases group's work: the transfer worker on the
// databases queue.
func Work(d WorkDeps) ports.Work {
	if d.Service == nil {
		return ports.Work{}
	}
	w := NewWorker(WorkerConfig{Service: d.Service, Events: d.Events, Logger: ports.Log(d.Logger, Queue.Consumer)})
	return ports.Work{Workers: []work.Worker{w.Work(d.Queue)}}
}
