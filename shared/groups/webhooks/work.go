package webhooks

import (
	"fmt"
	"log/slog"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
)

// WorkerFunction is the delivery worker's Lambda, on the webhook queue the
// kernel declares (work.Webhooks); KMS opens the signing secrets.
var WorkerFunction = deploy.Function{Name: work.Webhooks.Consumer, MemoryMiB: 256, Timeout: 60 * time.Second,
	Uses: deploy.Uses{deploy.UseTable, deploy.Consume(work.Webhooks), deploy.UseKMS}, BatchSize: 10}

// OutboxFunction is the outbox pass's Lambda: each minute it fans out the
// webhook events a crash left in the outbox (Repo.SweepOutbox); a request
// fans out its own at once.
var OutboxFunction = deploy.Function{Name: "webhook-outbox", MemoryMiB: 256, Timeout: 55 * time.Second,
	Uses: deploy.Uses{deploy.UseTable, deploy.Send(work.Webhooks)}, Schedule: work.Schedule{Every: time.Minute}}

// WorkDeps are what the webhook group's work uses: the table, the
// envelope key that opens signing secrets, the webhook queue, the clock,
// the logger, whether deliveries may reach private addresses (local
// development) and the wait before an in-process retry (nil is the
// worker's own schedule).
type WorkDeps struct {
	Store        store.Store
	Sealer       envelope.Sealer
	Queue        queue.Queue
	Now          func() time.Time
	Logger       *slog.Logger
	AllowPrivate bool
	Backoff      func(n int) time.Duration
}

// AllowPrivate reads ALLOW_PRIVATE_WEBHOOKS by getenv (nil is os.Getenv):
// true admits private receivers (local development).
func AllowPrivate(getenv func(string) string) bool {
	return ports.Env("ALLOW_PRIVATE_WEBHOOKS", getenv) == "true"
}

// RetryBackoff reads WEBHOOK_RETRY_BACKOFF by getenv (nil is os.Getenv), a
// development switch no deployment sets: a Go duration every retry waits
// instead of Backoff's schedule, so that a whole stack brought up on this
// machine (make stack, its tests) retries a failed delivery as a
// deployment does without waiting its 30 seconds. Unset is nil, the
// schedule.
func RetryBackoff(getenv func(string) string) (func(n int) time.Duration, error) {
	v := ports.Env("WEBHOOK_RETRY_BACKOFF", getenv)
	if v == "" {
		return nil, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > time.Hour {
		return nil, fmt.Errorf("webhooks: WEBHOOK_RETRY_BACKOFF=%q: want a duration from 1s to 1h, such as 2s", v)
	}
	return func(int) time.Duration { return d }, nil
}

// Work is the webhook group's work: the worker that delivers the webhook
// queue and the outbox pass that queues what a request recorded but did
// not send.
func Work(d WorkDeps) ports.Work {
	c := Config{Store: d.Store, Sealer: d.Sealer, Queue: d.Queue, Now: d.Now}
	delivery := c
	delivery.Guard = Guard{AllowPrivate: d.AllowPrivate}
	w := NewWorker(WorkerConfig{Config: delivery, Backoff: d.Backoff, Logger: ports.Log(d.Logger, work.Webhooks.Consumer)})
	outbox := work.Pass{Name: OutboxFunction.Name, Every: OutboxFunction.Schedule.LocalEvery(),
		Run: NewRepo(c).OutboxPass(ports.Log(d.Logger, OutboxFunction.Name), time.Now())}
	return ports.Work{Workers: []work.Worker{w.Work()}, Passes: []work.Pass{outbox}}
}
