// Package invoke is the one pipeline every managed-operation call runs
// through, whether it arrives over HTTP, over MCP or from a durable run:
// approval, creditsPerDay reservation, credit hold for the operation's
// maximum price, the call, then capture of the exact charge the service
// reports (the rest released), or release of everything when the call
// fails. It knows nothing of HTTP.
package invoke

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/keys"
)

// Caller is who the call is made for.
type Caller struct {
	AccountID string
	ProjectID string
	EndUser   string
	RequestID string
	// Chain is the key and its ancestors with their limits, root first.
	Chain []limits.Owner
}

// Call is one operation call.
type Call struct {
	ServiceID   string
	OperationID string
	Input       json.RawMessage
	ApprovalID  string
	// CallID names the call across its retries (derived from the client's
	// Idempotency-Key, or a run's id); "" when it has none. With it, a retry
	// after a crash reuses the first attempt's credit hold (never charging
	// twice) and the service is asked to run it once.
	CallID string
	// LimitRoot is the capability root whose limit selectors the call counts
	// against (creditsPerDay) and that names its credit hold:
	// "services.invoke" when empty, "runs.create" for a durable run.
	LimitRoot string
	// Connections are the protected connections the call names, by slot,
	// already checked and opened by the caller (connections.Repo.Resolve);
	// they go to the service in the upstream request and nowhere else.
	Connections map[string]upstream.Credential
}

// Result is a successful call.
type Result struct {
	ServiceID         string
	OperationID       string
	Output            json.RawMessage
	ChargedMicro      int64
	UpstreamRequestID string
}

// Pipeline holds what a call needs.
type Pipeline struct {
	Ledger    *credits.Ledger
	Limits    *limits.Counter
	Approvals *approvals.Repo
	Services  upstream.Invoker
	// Timeout bounds the upstream call.
	Timeout time.Duration
}

// Operation resolves and checks a call's service and operation.
func Operation(serviceID, operationID string) (catalog.Service, catalog.Operation, error) {
	svc, ok := catalog.Lookup(serviceID)
	if !ok {
		return svc, catalog.Operation{}, apierr.New(apierr.NotFound, "No managed service %q.", serviceID)
	}
	op, ok := svc.Op(operationID)
	if !ok || !op.Invocable {
		return svc, op, apierr.Invalid("Unknown operation.", apierr.Field("body.operationId", "%s has no invocable operation %q", serviceID, operationID))
	}
	return svc, op, nil
}

// Run makes one call.
func (p *Pipeline) Run(ctx context.Context, c Caller, call Call) (*Result, error) {
	svc, op, err := Operation(call.ServiceID, call.OperationID)
	if err != nil {
		return nil, err
	}
	if len(call.Input) == 0 {
		call.Input = json.RawMessage("{}")
	}
	if !op.Approval {
		return p.charge(ctx, c, svc, op, call)
	}
	if call.ApprovalID == "" {
		return nil, apierr.New(apierr.ApprovalRequired, "%s.%s requires an approval: create one with POST /v1/approvals/service-actions, have it approved, and send its approvalId.", svc.ID, op.ID)
	}
	undo, err := p.Approvals.Consume(ctx, c.AccountID, c.ProjectID, call.ApprovalID, svc.ID, op.ID, call.Input)
	if err != nil {
		return nil, err
	}
	res, err := p.charge(ctx, c, svc, op, call)
	if err != nil {
		_ = undo(context.WithoutCancel(ctx)) // the operation did not happen: the approval stays usable
	}
	return res, err
}

func (p *Pipeline) charge(ctx context.Context, c Caller, svc catalog.Service, op catalog.Operation, call Call) (*Result, error) {
	detached := context.WithoutCancel(ctx)
	root := call.LimitRoot
	if root == "" {
		root = "services.invoke"
	}
	reservation, err := p.Limits.ReserveCredits(ctx, c.Chain, keys.LimitSelectors(root, svc.ID, op.ID), op.PriceMicro)
	if err != nil {
		return nil, limits.APIError(err)
	}
	reference := keys.RequestOperation(root, svc.ID, op.ID)
	// The hold outlives its holder: the call's timeout, or the request's
	// deadline when that is later (the capture comes after the call).
	lifetime := p.Timeout
	if dl, ok := ctx.Deadline(); ok {
		lifetime = max(lifetime, time.Until(dl))
	}
	var hold *credits.Hold
	if call.CallID != "" {
		hold, err = p.Ledger.HoldOnce(ctx, c.AccountID, op.PriceMicro, reference, call.CallID, lifetime)
	} else {
		hold, err = p.Ledger.Hold(ctx, c.AccountID, op.PriceMicro, reference, lifetime)
	}
	if err != nil {
		_ = reservation.Release(detached)
		if errors.Is(err, credits.ErrInsufficient) {
			return nil, apierr.New(apierr.InsufficientCredits, "The balance cannot cover %s (up to %s credits). Top up with POST /v1/credits/x402/top-up.",
				op.ID, strconv.FormatFloat(float64(op.PriceMicro)/catalog.MicroPerCredit, 'f', -1, 64))
		}
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	res, err := p.Services.Invoke(callCtx, upstream.Request{
		ServiceID: svc.ID, OperationID: op.ID, Input: call.Input, AccountID: c.AccountID, ProjectID: c.ProjectID,
		EndUser: c.EndUser, RequestID: c.RequestID, MaxChargeMicro: op.PriceMicro, IdempotencyKey: call.CallID,
		Connections: call.Connections,
	})
	if err != nil {
		_ = hold.Release(detached)
		_ = reservation.Release(detached)
		return nil, UpstreamError(err)
	}
	if err := hold.Capture(detached, res.ChargedMicro); err != nil {
		return nil, err
	}
	res.ChargedMicro = hold.Charged // once, by whichever attempt of the call captured it
	_ = reservation.Settle(detached, res.ChargedMicro)
	return &Result{ServiceID: svc.ID, OperationID: op.ID, Output: res.Output, ChargedMicro: res.ChargedMicro, UpstreamRequestID: res.UpstreamRequestID}, nil
}

// UpstreamError maps the upstream port's failures to the catalogue; the
// service's own wait is passed on in Retry-After.
func UpstreamError(err error) error {
	var rl *upstream.RateLimitedError
	var un *upstream.UnavailableError
	switch {
	case errors.As(err, &rl):
		return apierr.New(apierr.UpstreamRateLimited, "The managed service asked to slow down; nothing was charged.").WithHeader("Retry-After", retrySeconds(rl.RetryAfter))
	case errors.As(err, &un):
		e := apierr.New(apierr.ServiceUnavailable, "The managed service is unavailable; nothing was charged.").WithHeader("Retry-After", retrySeconds(un.RetryAfter))
		e.Cause = err
		return e
	case errors.Is(err, upstream.ErrCredentialRejected):
		// Not transient: the same credentials will be refused again, so a
		// run fails rather than retries; the connections are marked.
		e := apierr.New(apierr.Conflict, "The managed service refused the credentials of a connection the call named (401); nothing was charged. Rotate them with PATCH /v1/connections/{connectionId}.")
		e.Cause = err
		return e
	case errors.Is(err, upstream.ErrNotConfigured):
		return apierr.New(apierr.ServiceUnavailable, "This managed service is not configured on this deployment.").WithHeader("Retry-After", "3600")
	case errors.Is(err, upstream.ErrBadUpstream):
		e := apierr.New(apierr.ServiceUnavailable, "The managed service answered incorrectly; nothing was charged.").WithHeader("Retry-After", "5")
		e.Cause = err
		return e
	}
	return err
}

func retrySeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}
