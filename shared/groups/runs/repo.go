package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/ids"
)

// Storage layout (the account's partition of the single table):
//
//	acct#<acct> | run#<runId>  the run: doc (JSON) and version, on which
//	                           every write is conditional
//	acct#<acct> | art#<artId>  an artifact's record; its bytes are in the
//	                           artifacts bucket under artifacts/<acct>/<artId>
const attrVersion = "version"

func runKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "run#" + id}
}

// record is a run as stored: the resource plus what only the worker reads.
type record struct {
	Run
	AccountID          string           `json:"accountId"`
	ChargedMicro       int64            `json:"chargedMicro"`
	LeaseUntil         *time.Time       `json:"leaseUntil,omitempty"`
	ConnectionVersions map[string]int64 `json:"connectionVersions,omitempty"`
}

func encode(r *Run) store.Item {
	it := store.NewItem(runKey(r.AccountID, r.ID))
	it.SetDoc(record{Run: *r, AccountID: r.AccountID, ChargedMicro: r.ChargedMicro, LeaseUntil: r.LeaseUntil, ConnectionVersions: r.ConnectionVersions})
	it[attrVersion] = r.version
	return it
}

func decode(it store.Item) (*Run, error) {
	var rec record
	if err := it.Doc(&rec); err != nil {
		return nil, fmt.Errorf("runs: decode %s: %w", it.Key(), err)
	}
	r := rec.Run
	r.AccountID, r.LeaseUntil, r.ConnectionVersions, r.version = rec.AccountID, rec.LeaseUntil, rec.ConnectionVersions, it.Int(attrVersion)
	r.setCharged(rec.ChargedMicro)
	if r.ArtifactIDs == nil {
		r.ArtifactIDs = []string{}
	}
	return &r, nil
}

// Config is what the repository and the worker reach the world through.
type Config struct {
	Store store.Store
	// Queue is the runs queue; without one no run can be created.
	Queue     queue.Queue
	Artifacts blob.Bucket
	Now       func() time.Time
}

// Repo persists runs and artifacts.
type Repo struct {
	st     store.Store
	q      queue.Queue
	bucket blob.Bucket
	now    func() time.Time
}

// NewRepo builds the repository; it holds no state of its own.
func NewRepo(c Config) *Repo {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Repo{st: c.Store, q: c.Queue, bucket: c.Artifacts, now: c.Now}
}

// NewRun is a run to create, on the authority of key KeyID.
type NewRun struct {
	AccountID, ProjectID, EndUser, KeyID string
	ServiceID, OperationID               string
	Input                                json.RawMessage
	ApprovalID                           string
	// Connections are the slots the run names and ConnectionVersions their
	// versions, as connections.Repo.Check returned them.
	Connections        map[string]string
	ConnectionVersions map[string]int64
	// CallID names the request across its retries (api.CallID): a retry
	// after a crash finds the run its first attempt created instead of
	// creating a second one. "" creates a run every time.
	CallID string
}

// callKey is the recovery point of a create: which run a call created.
func callKey(accountID, callID string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "runcall#" + callID}
}

// callLifetime keeps a call's recovery point past the idempotency record
// of its request (24 hours), the window in which a client retries.
const callLifetime = 48 * time.Hour

// Validate checks what a run is created with: a durable operation of a
// registered service, input JSON of at most MaxInputBytes, and an approval
// id when the operation is approval-gated (the approval itself is consumed
// when the run executes). Errors are validation_failed or approval_required.
func Validate(serviceID, operationID string, input json.RawMessage, approvalID string) error {
	svc, ok := catalog.Lookup(serviceID)
	if !ok {
		return apierr.Invalid("Unknown service.", apierr.Field("body.serviceId", "no managed service %q", serviceID))
	}
	op, ok := svc.Op(operationID)
	if !ok || !op.Invocable {
		return apierr.Invalid("Unknown operation.", apierr.Field("body.operationId", "%s has no invocable operation %q", svc.ID, operationID))
	}
	if !op.Durable {
		return apierr.Invalid("This operation cannot run as a durable run.", apierr.Field("body.operationId", "%s.%s is not durable; call it with POST /v1/services/%s/invoke", svc.ID, op.ID, svc.ID))
	}
	if len(input) > MaxInputBytes {
		return apierr.Invalid("The input is too large.", apierr.Field("body.input", "at most %d bytes of JSON", MaxInputBytes))
	}
	if len(input) > 0 && !json.Valid(input) {
		return apierr.Invalid("The input is not JSON.", apierr.Field("body.input", "not a JSON value"))
	}
	if op.Approval && approvalID == "" {
		return apierr.New(apierr.ApprovalRequired, "%s.%s requires an approval: create one with POST /v1/approvals/service-actions, have it approved, and send its approvalId.", svc.ID, op.ID)
	}
	return nil
}

// Create records a queued run (with its call's recovery point) and sends
// its message. If the message cannot be sent the run is removed again, so
// no run waits for a message that will never come and a retried create
// starts afresh; if the process dies before sending it, the retry finds the
// run through the recovery point and sends it (resume). It interprets a
// failed condition, so it is not for idempotency.Deferring.
func (r *Repo) Create(ctx context.Context, n NewRun) (*Run, error) {
	if r.q == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Durable runs are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	if err := Validate(n.ServiceID, n.OperationID, n.Input, n.ApprovalID); err != nil {
		return nil, err
	}
	input := json.RawMessage("{}")
	if len(n.Input) > 0 {
		var buf bytes.Buffer
		_ = json.Compact(&buf, n.Input) // valid: checked above
		input = buf.Bytes()
	}
	now := r.now().UTC()
	run := &Run{ID: ids.New("run", now), ServiceID: n.ServiceID, OperationID: n.OperationID, Input: input,
		Status: StatusQueued, ArtifactIDs: []string{}, CreatedByKeyID: n.KeyID, CreatedAt: now,
		ApprovalID: optional(n.ApprovalID), ProjectID: optional(n.ProjectID), EndUser: optional(n.EndUser),
		AccountID: n.AccountID, version: 1}
	if len(n.Connections) > 0 {
		run.Connections, run.ConnectionVersions = n.Connections, n.ConnectionVersions
	}
	ops := []store.Op{store.PutOp(encode(run), store.NotExists())}
	if n.CallID != "" {
		call := store.NewItem(callKey(n.AccountID, n.CallID))
		call["run"] = run.ID
		call[store.AttrExpiresAt] = now.Add(callLifetime).Unix()
		ops = append(ops, store.PutOp(call, store.NotExists()))
	}
	err := r.st.Transact(ctx, ops)
	var tx *store.TxError
	switch {
	case errors.As(err, &tx) && tx.Index == 1:
		return r.resume(ctx, n)
	case err != nil:
		return nil, fmt.Errorf("runs: create: %w", err)
	}
	if err := r.enqueue(ctx, run); err != nil {
		undo := []store.Op{store.DeleteOp(runKey(run.AccountID, run.ID), store.AttrEquals(attrVersion, run.version))}
		if n.CallID != "" {
			undo = append(undo, store.DeleteOp(callKey(n.AccountID, n.CallID)))
		}
		_ = r.st.Transact(context.WithoutCancel(ctx), undo)
		return nil, err
	}
	return run, nil
}

func (r *Repo) enqueue(ctx context.Context, run *Run) error {
	body, _ := json.Marshal(Message{AccountID: run.AccountID, RunID: run.ID})
	if err := r.q.Send(ctx, queue.Message{Body: body}); err != nil {
		return fmt.Errorf("runs: enqueue %s: %w", run.ID, err)
	}
	return nil
}

// resume answers a retry of a create whose first attempt wrote its run:
// that run, sent to the queue again while it is queued, since the first
// attempt may have died before sending it (a second message is harmless:
// a run is claimed conditionally, so it executes once).
func (r *Repo) resume(ctx context.Context, n NewRun) (*Run, error) {
	it, err := r.st.Get(ctx, callKey(n.AccountID, n.CallID))
	if err != nil {
		return nil, fmt.Errorf("runs: read recovery point: %w", err)
	}
	run, err := r.load(ctx, n.AccountID, it.String("run"))
	if err != nil {
		return nil, err
	}
	if run.Status == StatusQueued {
		if err := r.enqueue(ctx, run); err != nil {
			return nil, err
		}
	}
	return run, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

var errNotFound = apierr.New(apierr.NotFound, "No such run.")

// load reads a run of the account, visible or not.
func (r *Repo) load(ctx context.Context, accountID, id string) (*Run, error) {
	if !ids.Valid("run", id) {
		return nil, errNotFound
	}
	it, err := r.st.Get(ctx, runKey(accountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("runs: get: %w", err)
	}
	return decode(it)
}

// Get reads a run the viewer may see; any other is not_found.
func (r *Repo) Get(ctx context.Context, v Viewer, id string) (*Run, error) {
	run, err := r.load(ctx, v.AccountID, id)
	if err != nil {
		return nil, err
	}
	if !v.sees(run.ProjectID, run.ServiceID) {
		return nil, errNotFound
	}
	return run, nil
}

// List pages through the runs the viewer may see, newest first, optionally
// only those in one status.
func (r *Repo) List(ctx context.Context, v Viewer, status string, limit int, cursor string) ([]*Run, string, error) {
	out, next, err := scan(ctx, r.st, v.AccountID, "run#", limit, cursor, func(it store.Item) (*Run, bool, error) {
		run, err := decode(it)
		if err != nil {
			return nil, false, err
		}
		return run, v.sees(run.ProjectID, run.ServiceID) && (status == "" || run.Status == status), nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("runs: list: %w", err)
	}
	return out, next, nil
}

// Cancel cancels a queued run at once; a running run is flagged
// (cancelRequestedAt): its current attempt finishes, since a call already
// made to a service cannot be taken back, but it is not retried. Cancelling
// a cancelled run changes nothing; a finished one is a conflict.
func (r *Repo) Cancel(ctx context.Context, v Viewer, id string) (*Run, error) {
	run, err := r.Get(ctx, v, id)
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	return r.change(ctx, run, func(run *Run) error {
		switch run.Status {
		case StatusQueued:
			run.Status, run.FinishedAt, run.CancelRequestedAt, run.NextAttemptAt = StatusCancelled, &now, &now, nil
		case StatusRunning:
			if run.CancelRequestedAt != nil {
				return errUnchanged
			}
			run.CancelRequestedAt = &now
		case StatusCancelled:
			return errUnchanged
		default:
			return apierr.New(apierr.Conflict, "The run has %s and can no longer be cancelled.", run.Status)
		}
		return nil
	})
}
