package webhooks

import (
	"time"

	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/work"
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

// Work is the webhook group's work on p: the worker that delivers the
// webhook queue (ALLOW_PRIVATE_WEBHOOKS lets it reach private addresses,
// for local development) and the outbox pass that queues what a request
// recorded but did not send.
func Work(p ports.Ports) ports.Work {
	c := Config{Store: p.Store, Sealer: p.Sealer, Queue: p.Queue(work.Webhooks), Now: p.Now}
	delivery := c
	delivery.Guard = Guard{AllowPrivate: p.Env("ALLOW_PRIVATE_WEBHOOKS") == "true"}
	w := NewWorker(WorkerConfig{Config: delivery, Backoff: p.Backoff, Logger: p.Log(work.Webhooks.Consumer)})
	outbox := work.Pass{Name: OutboxFunction.Name, Every: OutboxFunction.Schedule.LocalEvery(),
		Run: NewRepo(c).OutboxPass(p.Log(OutboxFunction.Name), time.Now())}
	return ports.Work{Workers: []work.Worker{w.Work()}, Passes: []work.Pass{outbox}}
}
