// Package work declares what a queue and a schedule are, and the webhook
// queue every group sends to, and runs a group's queue workers and
// scheduled passes in the local process. Infra (infra/stacks) creates the
// queues, their dead-letter queues, event sources and EventBridge rules
// from the declarations (this package's and the groups',
// docs/structure.md); awsenv names them, the embedded backend opens them,
// and the workers count their attempts against the same MaxReceives. On
// Lambda the event source mapping and the rule play the part of Run's
// loops (package lambdaedge). It links no AWS client and no HTTP kernel, so
// that every function and infra may read it.
package work

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"platformapi/shared/adapters/queue"
)

// Queue declares one work queue with its dead-letter queue.
type Queue struct {
	// Name is the queue's name in the embedded store (its dead letters in
	// Name+"-dlq") and, prefixed with "platform-api-", on AWS.
	Name string
	// Env prefixes its environment variables: <Env>_QUEUE_URL (CDK passes
	// it) and <Env>_QUEUE_NAME (a local override of the name).
	Env string
	// Stack prefixes its CloudFormation ids: <Stack>Queue, <Stack>DLQ.
	Stack string
	// MaxReceives is how often a message is delivered before it moves to
	// the dead-letter queue. Its worker fails a message for good on that
	// same receive, never earlier or later.
	MaxReceives int
	// Consumer is the Lambda function the queue triggers; the queue's
	// visibility timeout on AWS is six times that function's timeout.
	Consumer string
	// MaxAge is the age of the oldest message past which the queue is
	// stuck: longer than a message's whole legitimate life (every retry's
	// backoff or visibility timeout, and its attempts). Stuck says why, and
	// DeadLettered what a message in the dead-letter queue means: the
	// alarms' descriptions.
	MaxAge       time.Duration
	Stuck        string
	DeadLettered string
}

// Webhooks is the webhook queue: every group publishes its events to it,
// so the kernel declares it rather than the webhooks group that consumes
// it. Deliveries get several attempts because a receiver being down for a
// while is normal.
var Webhooks = Queue{Name: "webhooks", Env: "WEBHOOK", Stack: "Webhook", MaxReceives: 8, Consumer: "webhook-worker",
	MaxAge: 3 * time.Hour, Stuck: "the oldest webhook delivery is older than its whole retry schedule (about 2 h): the webhook worker is not draining the queue",
	DeadLettered: "A webhook delivery exhausted its retries and waits in the dead-letter queue."}

// Queues are the queues declared here: the webhook queue. A group declares
// its own in its deploy.Unit, after this one (platform.Queues is every
// queue, docs/structure.md).
var Queues = []Queue{Webhooks}

// Schedule is how often a scheduled pass runs. The function that runs it
// declares it (deploy.Function's Schedule): an EventBridge rule invokes
// that function every Every, and the local process's loop of the same name
// runs the pass every LocalEvery.
type Schedule struct {
	// Every is the rule's rate, whole minutes; 0 is no schedule.
	Every time.Duration
	// Local is how often the local process runs the pass (Every when 0):
	// more often where a developer waits for its effect.
	Local time.Duration
}

// LocalEvery is how often the local process runs the pass.
func (s Schedule) LocalEvery() time.Duration {
	if s.Local > 0 {
		return s.Local
	}
	return s.Every
}

// Worker consumes one queue: Handle takes a batch and returns the ids of
// the messages to leave in the queue (a Lambda's partial batch response).
type Worker struct {
	Name   string
	Queue  queue.Queue
	Handle func(ctx context.Context, ms []queue.Received) (failed []string)
	// Batch and Visibility are the local receive's: how many messages one
	// receive takes, and how long they stay hidden from other receivers
	// (longer than Handle may take, or a second receiver gets them).
	Batch      int
	Visibility time.Duration
}

// Pass is one scheduled pass: Run calls it at start and then every Every.
type Pass struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Run runs every worker and every pass until ctx is done, and returns once
// each has finished what it held (close the storage only after). A worker
// that has no queue is skipped; a failed pass is logged and the next tick
// tries again.
func Run(ctx context.Context, logger *slog.Logger, workers []Worker, passes []Pass) {
	var wg sync.WaitGroup
	for _, w := range workers {
		if w.Queue == nil {
			continue
		}
		log := logger.With("worker", w.Name)
		wg.Go(func() { queue.Consume(ctx, w.Queue, max(w.Batch, 1), w.Visibility, w.Handle, log) })
	}
	for _, p := range passes {
		log := logger.With("worker", p.Name)
		wg.Go(func() { every(ctx, log, p) })
	}
	wg.Wait()
}

// every runs p at once and then each p.Every until ctx is done.
func every(ctx context.Context, log *slog.Logger, p Pass) {
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		if err := p.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("scheduled pass failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
