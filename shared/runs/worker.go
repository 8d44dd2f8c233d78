package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"platformapi/shared/apierr"
	"platformapi/shared/approvals"
	"platformapi/shared/credits"
	"platformapi/shared/invoke"
	"platformapi/shared/keys"
	"platformapi/shared/limits"
	"platformapi/shared/projects"
	"platformapi/shared/queue"
	"platformapi/shared/store"
	"platformapi/shared/upstream"
)

// Worker defaults.
const (
	// DefaultMaxAttempts must equal the runs queue's redrive maxReceiveCount
	// (infra: runsMaxReceives), so that the last delivery before the
	// dead-letter queue settles the run instead of leaving it queued.
	DefaultMaxAttempts = 3
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
	Services    upstream.Invoker
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
		// A running attempt is presumed dead once it has had its whole
		// timeout and a minute of storage writes on top.
		lease:       c.Timeout + time.Minute,
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

// execute runs a claimed run's attempt through the invoke pipeline, on the
// authority of the key that created it, and records the outcome.
func (w *Worker) execute(ctx context.Context, run *Run, m queue.Received) error {
	attempt := run.Attempts
	retryable := attempt < w.maxAttempts && m.Attempts < w.maxAttempts
	caller, err := w.caller(ctx, run)
	if err != nil {
		if retryable && errors.Is(err, store.ErrUnavailable) {
			return w.retry(ctx, run, attempt, m, w.backoff(attempt, 0))
		}
		return w.fail(ctx, run, attempt, err)
	}
	res, err := w.pipeline.Run(ctx, caller, invoke.Call{ServiceID: run.ServiceID, OperationID: run.OperationID,
		Input: run.Input, ApprovalID: deref(run.ApprovalID), LimitRoot: "runs.create"})
	if err != nil {
		if asked, ok := transient(err); ok && retryable {
			return w.retry(ctx, run, attempt, m, w.backoff(attempt, asked))
		}
		return w.fail(ctx, run, attempt, err)
	}
	return w.succeed(ctx, run, attempt, res)
}

// transient reports whether a pipeline error is one that promises nothing
// was charged and asks to try again later (the service's 503 or 429), and
// how long the service asked to wait. Any other error is final: in
// particular an internal one, which may come after the call was made.
func transient(err error) (time.Duration, bool) {
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != apierr.ServiceUnavailable && e.Code != apierr.UpstreamRateLimited {
		return 0, false
	}
	secs, _ := strconv.Atoi(e.Headers["Retry-After"])
	return time.Duration(secs) * time.Second, true
}

// caller is who the run executes for: the creating key's chain as it is
// now (revoked or expired: the run fails, uncharged), its limits, and the
// run's account, project and end user.
func (w *Worker) caller(ctx context.Context, run *Run) (invoke.Caller, error) {
	chain, err := w.keys.Chain(ctx, run.CreatedByKeyID)
	if err != nil {
		return invoke.Caller{}, err
	}
	if k := chain[len(chain)-1]; k.AccountID != run.AccountID {
		return invoke.Caller{}, fmt.Errorf("runs: %s: creator key %s belongs to another account", run.ID, k.ID)
	}
	if run.ProjectID != nil {
		active, err := w.projects.Active(ctx, run.AccountID, *run.ProjectID)
		if err != nil {
			return invoke.Caller{}, err
		}
		if !active {
			return invoke.Caller{}, apierr.New(apierr.ProjectDenied, "The run's project has been archived.")
		}
	}
	owners := make([]limits.Owner, len(chain))
	for i, k := range chain {
		owners[i] = limits.Owner{ID: k.ID, Limits: k.Limits}
	}
	return invoke.Caller{AccountID: run.AccountID, ProjectID: deref(run.ProjectID), EndUser: deref(run.EndUser), RequestID: run.ID, Chain: owners}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// retry puts the run back to queued and hides its message for the
// backoff; a run whose cancellation was asked for meanwhile is cancelled
// instead. If the message can no longer be rescheduled (another delivery
// holds it now), a fresh one is sent with the delay, so a queued run never
// waits without a message.
func (w *Worker) retry(ctx context.Context, run *Run, attempt int, m queue.Received, wait time.Duration) error {
	ctx = context.WithoutCancel(ctx) // the run is queued again: it must get its message
	now := w.repo.now().UTC()
	next := now.Add(wait)
	done, err := w.finish(ctx, run, attempt, func(r *Run) {
		if r.CancelRequestedAt != nil {
			r.Status, r.FinishedAt = StatusCancelled, &now
			return
		}
		r.Status, r.NextAttemptAt, r.FinishedAt = StatusQueued, &next, nil
	})
	if err != nil || done.Status != StatusQueued {
		return err
	}
	if err := w.repo.q.ChangeVisibility(ctx, m.Receipt, wait); err != nil {
		body, _ := json.Marshal(Message{AccountID: run.AccountID, RunID: run.ID})
		if err := w.repo.q.Send(ctx, queue.Message{Body: body, Delay: wait}); err != nil {
			return fmt.Errorf("runs: reschedule %s: %w", run.ID, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s in %v", ErrRetry, run.ID, wait)
}

// fail records a failed attempt's error on the run: a catalogue error as
// its code and detail, anything else as internal_error, logged and never
// shown.
func (w *Worker) fail(ctx context.Context, run *Run, attempt int, cause error) error {
	e := &Failure{Code: string(apierr.Internal), Detail: "The run failed because of an internal error."}
	var ae *apierr.Error
	if errors.As(cause, &ae) {
		e.Code, e.Detail = string(ae.Code), ae.Detail
	} else {
		w.log.Error("run failed", "runId", run.ID, "error", cause.Error())
	}
	_, err := w.finish(ctx, run, attempt, func(r *Run) { r.Status, r.Error = StatusFailed, e })
	return err
}

// succeed stores the output as the run's artifact and finishes the run in
// the same write as the artifact's record. The call has been made and
// charged by now, so a bucket failure does not fail the run: it succeeds
// without an artifact, its result inline if it fits, and the failure is
// logged.
func (w *Worker) succeed(ctx context.Context, run *Run, attempt int, res *invoke.Result) error {
	ctx = context.WithoutCancel(ctx) // charged: the outcome must be recorded
	art, op, err := w.repo.putOutput(ctx, run, res.Output)
	var extra []store.Op
	if err != nil {
		w.log.Error("run output not stored as artifact", "runId", run.ID, "error", err.Error())
	} else {
		extra = append(extra, op)
	}
	_, err = w.finish(ctx, run, attempt, func(r *Run) {
		r.Status = StatusSucceeded
		r.setCharged(res.ChargedMicro)
		if len(res.Output) <= MaxInlineResultBytes {
			r.Result = res.Output
		}
		if res.UpstreamRequestID != "" {
			r.UpstreamRequestID = &res.UpstreamRequestID
		}
		if art != nil {
			r.ArtifactIDs = append(slices.Clone(r.ArtifactIDs), art.ID)
		}
	}, extra...)
	return err
}

// finish ends attempt number attempt of a running run with set (which
// moves it on), unless the attempt is no longer current: another worker
// found it interrupted and settled it. finishedAt and the lease are
// handled here.
func (w *Worker) finish(ctx context.Context, run *Run, attempt int, set func(*Run), extra ...store.Op) (*Run, error) {
	now := w.repo.now().UTC()
	return w.repo.change(context.WithoutCancel(ctx), run, func(r *Run) error {
		if r.Status != StatusRunning || r.Attempts != attempt {
			return errUnchanged
		}
		r.FinishedAt, r.LeaseUntil = &now, nil
		set(r)
		return nil
	}, extra...)
}
