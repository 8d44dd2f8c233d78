// Package runs holds durable runs (docs/runs-and-artifacts.md): a managed-operation call that
// is accepted now and executed later by a worker, through the same invoke
// pipeline as a synchronous invoke (approval, creditsPerDay, credit hold,
// exact charge), counted against runs.create selectors, with its output kept
// as an artifact in the blob store.
//
// A run moves queued → running → succeeded | failed, or queued → cancelled,
// and a transient upstream failure puts it back to queued for a later
// attempt. Every move is a conditional write on the run's version, so a
// queue message delivered twice, or two workers racing, execute a run once:
// the invariant this package must never bend. It knows nothing of HTTP or
// Lambda.
package runs

import (
	"encoding/json"
	"time"

	"platformapi/shared/base/catalog"
)

// Statuses of a run.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// MaxInputBytes bounds a run's input: it is kept in the run's item, which
// must stay within one DynamoDB item (400 KB) together with the result.
const MaxInputBytes = 256 << 10

// MaxInlineResultBytes bounds the result kept on the run itself; a larger
// output is only in the run's artifact.
const MaxInlineResultBytes = 64 << 10

// Run is the resource.
type Run struct {
	ID                string            `json:"id" doc:"Run id (run_…)"`
	ServiceID         string            `json:"serviceId"`
	OperationID       string            `json:"operationId"`
	Input             json.RawMessage   `json:"input" doc:"The operation's input, as sent"`
	ApprovalID        *string           `json:"approvalId" doc:"The approval consumed when the run executes (approval-gated operations)"`
	Connections       map[string]string `json:"connections,omitempty" doc:"The protected connections the run uses, by slot, as sent; checked when the run is created and again when it executes"`
	Status            string            `json:"status" enum:"queued,running,succeeded,failed,cancelled"`
	Result            json.RawMessage   `json:"result" doc:"The operation's output when succeeded and at most 64 KiB, else null; the full output is always the run's artifact"`
	Error             *Failure          `json:"error" doc:"Why the run failed (failed runs only)"`
	ChargedCredits    float64           `json:"chargedCredits" doc:"Exact amount charged, as reported by the service; 0 unless succeeded"`
	ArtifactIDs       []string          `json:"artifactIds" doc:"Artifacts the run produced (its output, application/json)"`
	Attempts          int               `json:"attempts" doc:"Executions started; a transient upstream failure is retried with backoff"`
	CreatedByKeyID    string            `json:"createdByKeyId" doc:"The key on whose authority the run executes; revoking it (or an ancestor) fails the run if it has not started"`
	ProjectID         *string           `json:"projectId"`
	EndUser           *string           `json:"endUser"`
	UpstreamRequestID *string           `json:"upstreamRequestId" doc:"The managed service's correlation id, when it has one"`
	CreatedAt         time.Time         `json:"createdAt"`
	StartedAt         *time.Time        `json:"startedAt" doc:"When the latest attempt started"`
	FinishedAt        *time.Time        `json:"finishedAt"`
	NextAttemptAt     *time.Time        `json:"nextAttemptAt" doc:"When a queued run waiting to be retried is next attempted"`
	CancelRequestedAt *time.Time        `json:"cancelRequestedAt" doc:"When cancellation was asked for; a running run then finishes its current attempt but is not retried"`

	AccountID    string `json:"-"`
	ChargedMicro int64  `json:"-"`
	// ConnectionVersions is each slot's credential version when the run
	// was created: it executes with those credentials while a rotation
	// keeps them (connections.Repo.ResolvePinned).
	ConnectionVersions map[string]int64 `json:"-"`
	LeaseUntil         *time.Time       `json:"-"` // a running attempt is presumed dead after this
	version            int64
}

// Failure is why a run failed: a code of the API's error catalogue (for
// example insufficient_credits, key_revoked, service_unavailable) or
// run_interrupted when the worker executing it stopped mid-way.
type Failure struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// CodeInterrupted fails a run whose worker died during the call: whether the
// service executed it is unknown, so it is never executed again; the ledger
// is authoritative for any charge.
const CodeInterrupted = "run_interrupted"

// Terminal reports whether the run will never change again.
func (r *Run) Terminal() bool {
	return r.Status == StatusSucceeded || r.Status == StatusFailed || r.Status == StatusCancelled
}

func (r *Run) setCharged(micro int64) {
	r.ChargedMicro, r.ChargedCredits = micro, float64(micro)/catalog.MicroPerCredit
}

// Message is the runs queue's message body: which run to execute.
type Message struct {
	AccountID string `json:"accountId"`
	RunID     string `json:"runId"`
}

// Viewer is who reads or changes runs and artifacts: one account, a project
// scope ("" at account level, which sees every project) and the services
// the key may reach (run and artifact reads also require service
// access to the resource's source service). Anything else is not_found.
type Viewer struct {
	AccountID     string
	ProjectID     string
	AllowsService func(serviceID string) bool
}

func (v Viewer) sees(projectID *string, serviceID string) bool {
	if v.ProjectID != "" && (projectID == nil || *projectID != v.ProjectID) {
		return false
	}
	return v.AllowsService(serviceID)
}
