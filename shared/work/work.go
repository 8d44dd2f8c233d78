// Package work declares the shared queues and the schedules once, and runs
// a group's queue workers and scheduled passes in the local process. Infra
// (infra/stacks) creates the queues, their dead-letter queues, event sources
// and EventBridge rules from these declarations; awsenv names them, the
// embedded backend opens them, and the workers count their attempts against
// the same MaxReceives. On Lambda the event source mapping and the rule play
// the part of Run's loops (package lambdaedge). It links no AWS client and
// no HTTP kernel, so that every function and infra may read it.
package work

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"platformapi/shared/queue"
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

// The queues. Webhook deliveries get several attempts because a receiver
// being down for a while is normal; a run or a database transfer that
// failed three times fails for a reason a fourth attempt will not fix; a
// wallet transaction's step mostly fails for its chain's reasons (an RPC
// endpoint down or rate limiting), which pass, and the transaction's own
// state, not the receive count, decides whether it is broadcast again.
var (
	Webhooks = Queue{Name: "webhooks", Env: "WEBHOOK", Stack: "Webhook", MaxReceives: 8, Consumer: "webhook-worker",
		MaxAge: 3 * time.Hour, Stuck: "the oldest webhook delivery is older than its whole retry schedule (about 2 h): the webhook worker is not draining the queue",
		DeadLettered: "A webhook delivery exhausted its retries and waits in the dead-letter queue."}
	Runs = Queue{Name: "runs", Env: "RUNS", Stack: "Runs", MaxReceives: 3, Consumer: "run-worker",
		MaxAge: time.Hour, Stuck: "the oldest run message is older than three attempts and their backoffs: the run worker is not draining the queue",
		DeadLettered: "A durable run failed repeatedly and waits in the dead-letter queue."}
	Databases = Queue{Name: "databases", Env: "DATABASES", Stack: "Databases", MaxReceives: 3, Consumer: "databases-worker",
		MaxAge: 4 * time.Hour, Stuck: "the oldest database transfer is older than three attempts and their visibility timeouts: the databases worker is not draining the queue",
		DeadLettered: "A database transfer job failed repeatedly and waits in the dead-letter queue."}
	// A waiting receipt is a new, delayed message each time, so the oldest
	// message is at most ten receives of one step old (10 x 6 minutes).
	Wallets = Queue{Name: "wallets", Env: "WALLETS", Stack: "Wallets", MaxReceives: 10, Consumer: "wallets-worker",
		MaxAge: 2 * time.Hour, Stuck: "the oldest wallet transaction step is older than ten attempts and their visibility timeouts: the wallets worker is not draining the queue",
		DeadLettered: "A wallet transaction's step failed repeatedly and its message waits in the dead-letter queue (wallets-recheck still advances the transaction)."}
)

// Queues are the queues declared here, in the order infra creates them:
// the webhook queue every group sends to, and those of the groups that
// predate group declarations. A new group declares its own in its
// deploy.Unit, after these (platform.Queues is every queue).
var Queues = []Queue{Webhooks, Runs, Databases, Wallets}

// Schedule declares one scheduled pass.
type Schedule struct {
	// Function is the Lambda function an EventBridge rule invokes every
	// Every (whole minutes); the local process's loop has the same name.
	Function string
	Every    time.Duration
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

// The schedules. A recheck runs each minute on AWS (the paper tape's
// resolution) and every five seconds locally, so that a limit order fills,
// or a decided wallet approval goes out, within seconds of it becoming due.
var (
	FileSweeper    = Schedule{Function: "file-sweeper", Every: time.Hour}
	HoldSweeper    = Schedule{Function: "hold-sweeper", Every: 5 * time.Minute, Local: time.Minute}
	TradingRecheck = Schedule{Function: "trading-recheck", Every: time.Minute, Local: 5 * time.Second}
	WalletsRecheck = Schedule{Function: "wallets-recheck", Every: time.Minute, Local: 5 * time.Second}
	WebhookOutbox  = Schedule{Function: "webhook-outbox", Every: time.Minute}
)

// Schedules are every schedule.
var Schedules = []Schedule{FileSweeper, HoldSweeper, TradingRecheck, WalletsRecheck, WebhookOutbox}

// ScheduleOf is the schedule of a function, if a schedule invokes it.
func ScheduleOf(function string) (Schedule, bool) {
	for _, s := range Schedules {
		if s.Function == function {
			return s, true
		}
	}
	return Schedule{}, false
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
