package runs

import (
	"fmt"
	"time"

	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/work"
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

// Work is the runs group's work on p: the run worker on the runs queue.
// RUN_TIMEOUT bounds one attempt (default DefaultTimeout).
func Work(p ports.Ports) (ports.Work, error) {
	var timeout time.Duration
	if v := p.Env("RUN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ports.Work{}, fmt.Errorf("runs: RUN_TIMEOUT=%q: want a positive duration such as 4m", v)
		}
		timeout = d
	}
	w := NewWorker(WorkerConfig{
		Config:   Config{Store: p.Store, Queue: p.Queue(Queue), Artifacts: p.Artifacts, Now: p.Now},
		Services: p.Services, Sealer: p.Sealer, Logger: p.Log(Queue.Consumer), Timeout: timeout,
	})
	return ports.Work{Workers: []work.Worker{w.Work()}}, nil
}
