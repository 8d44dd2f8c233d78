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

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/emf"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/services/invoke"
)

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
	call := invoke.Call{ServiceID: run.ServiceID, OperationID: run.OperationID,
		Input: run.Input, ApprovalID: deref(run.ApprovalID), LimitRoot: "runs.create", CallID: run.ID}
	if len(run.Connections) > 0 {
		// Checked again now: a connection disabled, deleted or no longer
		// allowed since the run was created fails it, uncharged.
		call.Connections, err = w.conns.ResolvePinned(ctx, run.AccountID, deref(run.ProjectID), run.ServiceID, run.Connections, run.ConnectionVersions)
		if err != nil {
			if retryable && errors.Is(err, store.ErrUnavailable) {
				return w.retry(ctx, run, attempt, m, w.backoff(attempt, 0))
			}
			return w.fail(ctx, run, attempt, err)
		}
	}
	// The run's charge is its own audit event, shown to the key that
	// created it (no request is in flight to carry it).
	keyPath := make([]string, len(caller.Chain))
	for i, o := range caller.Chain {
		keyPath[i] = o.ID
	}
	res, err := w.pipeline.Run(credits.ForKey(ctx, credits.Attribution{RequestID: run.ID, KeyPath: keyPath, ProjectID: caller.ProjectID,
		Operation: "runs.execute"}), caller, call)
	if err != nil {
		if markErr := w.conns.MarkRejected(context.WithoutCancel(ctx), run.AccountID, deref(run.ProjectID), call.Connections, err); markErr != nil {
			w.log.Error("marking rejected connections failed", "runId", run.ID, "error", markErr.Error())
		}
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
	done, err := w.repo.change(context.WithoutCancel(ctx), run, func(r *Run) error {
		if r.Status != StatusRunning || r.Attempts != attempt {
			return errUnchanged
		}
		r.FinishedAt, r.LeaseUntil = &now, nil
		set(r)
		return nil
	}, extra...)
	if err == nil {
		w.metric(done)
	}
	return done, err
}

// runMetrics names the metric counting each state an attempt ends in.
var runMetrics = map[string]string{
	StatusSucceeded: "RunsSucceeded", StatusFailed: "RunsFailed",
	StatusQueued: "RunRetries", StatusCancelled: "RunsCancelled",
}

// metric writes how an attempt ended as one log line with its CloudWatch
// metrics (see shared/base/emf), once the outcome is stored: the outcome's
// count, the credits a success charged (micro-credits), and a failure's
// code as a property, never a dimension, so that a new code costs no metric.
func (w *Worker) metric(r *Run) {
	name, ok := runMetrics[r.Status]
	if !ok {
		return
	}
	ms := []emf.Metric{{Name: name, Unit: emf.Count, Value: 1}}
	if r.ChargedMicro > 0 {
		ms = append(ms, emf.Metric{Name: "ChargedMicroCredits", Unit: emf.None, Value: r.ChargedMicro})
	}
	attrs := []any{slog.String("runId", r.ID), slog.String("status", r.Status), slog.Int("attempt", r.Attempts)}
	if r.Error != nil {
		attrs = append(attrs, slog.String("code", r.Error.Code))
	}
	l := (&emf.Line{}).Dimension("Worker", "runs").Add(emf.Directive{Dimensions: [][]string{{"Worker"}}, Metrics: ms})
	w.log.Info("run attempt", append(attrs, l.Attrs(time.Now())...)...)
}
