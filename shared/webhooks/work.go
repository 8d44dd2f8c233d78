package webhooks

import (
	"time"

	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Work is the webhook group's work on p: the worker that delivers the
// webhook queue (ALLOW_PRIVATE_WEBHOOKS lets it reach private addresses,
// for local development) and the outbox pass that queues what a request
// recorded but did not send.
func Work(p ports.Ports) ports.Work {
	c := Config{Store: p.Store, Sealer: p.Sealer, Queue: p.Queue(work.Webhooks), Now: p.Now}
	delivery := c
	delivery.Guard = Guard{AllowPrivate: p.Env("ALLOW_PRIVATE_WEBHOOKS") == "true"}
	w := NewWorker(WorkerConfig{Config: delivery, Backoff: p.Backoff, Logger: p.Log(work.Webhooks.Consumer)})
	outbox := work.Pass{Name: work.WebhookOutbox.Function, Every: work.WebhookOutbox.LocalEvery(),
		Run: NewRepo(c).OutboxPass(p.Log(work.WebhookOutbox.Function), time.Now())}
	return ports.Work{Workers: []work.Worker{w.Work()}, Passes: []work.Pass{outbox}}
}
