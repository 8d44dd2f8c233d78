package runs

import (
	"fmt"
	"log/slog"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
)

// Queue is the runs queue. A run that failed three times fails for a
// reason a fourth attempt will not fix.
var Queue = work.Queue{Name: "runs", Env: "RUNS", Stack: "Runs", MaxReceives: 3, Consumer: "run-worker",
	MaxAge: time.Hour, Stuck: "the oldest run message is older than three attempts and their backoffs: the run worker is not draining the queue",
	DeadLettered: "A durable run failed repeatedly and waits in the dead-letter queue."}

// WorkerFunction is the run worker's Lambda. One run per invocation: a run
// can take minutes, and a batch would make every other run in it wait for
// the slowest. KMS opens the connections a run names.
var WorkerFunction = deploy.Function{Name: Queue.Consumer, MemoryMiB: 1024, Timeout: 5 * time.Minute,
	Uses: deploy.Uses{deploy.UseTable, deploy.Consume(Queue), deploy.UseArtifactsWrite, deploy.Send(work.Webhooks), deploy.UseKMS}, BatchSize: 1}

// WorkDeps are what the run worker uses: the table, the runs queue, the
// artifacts bucket, the managed services a run calls, the envelope key
// that opens the connections a run names, the clock (nil is time.Now), the
// logger and the configuration (nil is os.Getenv).
type WorkDeps struct {
	Store     store.Store
	Queue     queue.Queue
	Artifacts blob.Bucket
	Services  upstream.Router
	Sealer    envelope.Sealer
	Now       func() time.Time
	Logger    *slog.Logger
	Getenv    func(string) string
}

// Work is the runs group's work: the run worker on the runs queue.
// RUN_TIMEOUT bounds one attempt (default DefaultTimeout).
func Work(d WorkDeps) (ports.Work, error) {
	var timeout time.Duration
	if v := ports.Env("RUN_TIMEOUT", d.Getenv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ports.Work{}, fmt.Errorf("runs: RUN_TIMEOUT=%q: want a positive duration such as 4m", v)
		}
		timeout = d
	}
	w := NewWorker(WorkerConfig{
		Config:   Config{Store: d.Store, Queue: d.Queue, Artifacts: d.Artifacts, Now: d.Now},
		Services: d.Services, Sealer: d.Sealer, Logger: ports.Log(d.Logger, Queue.Consumer), Timeout: timeout,
	})
	return ports.Work{Workers: []work.Worker{w.Work()}}, nil
}
