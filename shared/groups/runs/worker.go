package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/connections"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/projects"
	"platformapi/shared/groups/services/invoke"
)

// DefaultMaxAttempts is the runs queue's redrive limit, so that the last
// delivery before the dead-letter queue settles the run instead of leaving
// it queued.
var DefaultMaxAttempts = Queue.MaxReceives

// Worker defaults.
const (
	// DefaultTimeout bounds one attempt's call to the service; it must stay
	// below the run worker Lambda's timeout.
	DefaultTimeout = 4 * time.Minute
)

// Backoff is the wait before attempt n+1 after attempt n failed
// transiently: what the service asked for (Retry-After), and at least
// 10 s × 2^(n-1); at most 15 minutes, the longest delay a queue message
// can be sent with.
func Backoff(n int, asked time.Duration) time.Duration {
	n = min(max(n, 1), 8)
	return min(max(asked, 10*time.Second<<(n-1)), 15*time.Minute)
}

// WorkerConfig configures a Worker. Config.Queue is the runs queue.
type WorkerConfig struct {
	Config
	// Services reaches the managed services, as for synchronous invokes.
	Services upstream.Invoker
	// Sealer opens the protected connections runs name; nil: such a run
	// fails with service_unavailable.
	Sealer      envelope.Sealer
	Timeout     time.Duration                                  // default DefaultTimeout
	MaxAttempts int                                            // default DefaultMaxAttempts
	Backoff     func(n int, asked time.Duration) time.Duration // default Backoff
	Logger      *slog.Logger
}

// Worker executes runs: one queue message, at most one execution.
type Worker struct {
	repo        *Repo
	keys        *keys.Repo
	projects    *projects.Repo
	pipeline    *invoke.Pipeline
	conns       *connections.Repo
	lease       time.Duration
	maxAttempts int
	backoff     func(int, time.Duration) time.Duration
	log         *slog.Logger
}

// NewWorker builds a worker and its invoke pipeline on the configured store.
func NewWorker(c WorkerConfig) *Worker {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff == nil {
		c.Backoff = Backoff
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return &Worker{
		repo: NewRepo(c.Config), keys: keys.NewRepo(c.Store, c.Now), projects: projects.NewRepo(c.Store, c.Now),
		pipeline: &invoke.Pipeline{
			Ledger: credits.NewLedger(c.Store, c.Now), Limits: limits.NewCounter(c.Store, c.Now, c.Timeout),
			Approvals: approvals.NewRepo(c.Store, c.Now), Services: c.Services, Timeout: c.Timeout,
		},
		conns: connections.NewRepo(c.Store, c.Sealer, c.Now),
		// A running attempt is presumed dead once it has had its whole
		// timeout and a minute of storage writes on top (as long again as
		// the timeout when that is shorter: a test's few seconds).
		lease:       c.Timeout + min(c.Timeout, time.Minute),
		maxAttempts: c.MaxAttempts, backoff: c.Backoff, log: c.Logger,
	}
}

// ErrRetry is returned (wrapped) by Handle when the attempt failed
// transiently and the run waits for its next attempt; ErrInProgress when
// another worker is executing the run now. Both mean: leave the message in
// the queue.
var (
	ErrRetry      = errors.New("runs: attempt failed transiently; retry scheduled")
	ErrInProgress = errors.New("runs: run is being executed by another worker")
)

// Handle processes one queue message. nil means the message is done with
// and should be deleted: the run is finished, cancelled, gone, or another
// delivery of the same run won the claim. An error means leave it in the
// queue: after ErrRetry Handle has already set its visibility to the
// backoff; otherwise the queue's visibility timeout brings it back.
func (w *Worker) Handle(ctx context.Context, m queue.Received) error {
	var msg Message
	if err := json.Unmarshal(m.Body, &msg); err != nil || msg.AccountID == "" || msg.RunID == "" {
		w.log.Error("run message malformed; dropped", "messageId", m.ID)
		return nil
	}
	run, err := w.repo.load(ctx, msg.AccountID, msg.RunID)
	if errors.Is(err, errNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := w.repo.now().UTC()
	switch run.Status {
	case StatusRunning:
		if run.LeaseUntil != nil && now.Before(*run.LeaseUntil) {
			return fmt.Errorf("%w: %s", ErrInProgress, run.ID)
		}
		return w.interrupt(ctx, run)
	case StatusQueued:
	default:
		return nil
	}
	claimed, err := w.repo.change(ctx, run, func(r *Run) error {
		if r.Status != StatusQueued {
			return errLost
		}
		lease := now.Add(w.lease)
		r.Status, r.Attempts, r.StartedAt, r.LeaseUntil, r.NextAttemptAt = StatusRunning, r.Attempts+1, &now, &lease, nil
		return nil
	})
	if errors.Is(err, errLost) {
		return nil
	}
	if err != nil {
		return err
	}
	return w.execute(ctx, claimed, m)
}

// errLost aborts a claim that another delivery won first.
var errLost = errors.New("runs: claimed by another delivery")

// interrupt fails a run whose worker stopped during its attempt. The call
// may or may not have reached the service, so it is not made again.
func (w *Worker) interrupt(ctx context.Context, run *Run) error {
	_, err := w.finish(ctx, run, run.Attempts, func(r *Run) {
		r.Status, r.Error = StatusFailed, &Failure{Code: CodeInterrupted, Detail: "The worker executing the run stopped during the call; it is not retried, since the service may have executed it. Credits charged, if any, are in the ledger."}
	})
	return err
}
