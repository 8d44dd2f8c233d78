// Package upstream is the port through which every managed service is
// reached, built-in (in-process) or remote (over HTTP). The invoke pipeline
// holds credits for an operation's maximum price, calls an Invoker, and
// captures exactly the charge the Invoker reports; so an Invoker must never
// report a charge above Request.MaxChargeMicro, and any failure it returns
// means nothing is charged.
//
// The package never decides HTTP statuses itself; it classifies failures
// into the errors below, and the API layer maps them to the problem codes
// of shared/base/apierr.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Request is one operation call. The identity fields scope the call: a
// service must never let one account, project or end user see another's
// data.
type Request struct {
	ServiceID   string
	OperationID string
	// Input is the operation's input, already a JSON value.
	Input json.RawMessage
	// AccountID is always set; ProjectID and EndUser are empty when the
	// request carries no project or end user.
	AccountID string
	ProjectID string
	EndUser   string
	// RequestID is the platform's correlation id, passed on to the service.
	RequestID string
	// IdempotencyKey names the call across its retries (the client's
	// Idempotency-Key, a run's id), so the service can run it once: a retry
	// after a crash or a lost answer gets the first attempt's result. Empty
	// when the call has no such identity.
	IdempotencyKey string
	// MaxChargeMicro is the most the service may charge, in micro-credits:
	// the credits held for the call. Zero means the call must be free.
	MaxChargeMicro int64
	// Connections are the protected connections the call names, by slot,
	// already checked (same account and project, active, allowed for this
	// service) and opened. Only the HTTP invoker sends them, to the service
	// alone; in-process services have no use for them.
	Connections map[string]Credential
}

// Result is a successful call.
type Result struct {
	Output json.RawMessage
	// ChargedMicro is the exact charge the service reports, 0..MaxChargeMicro.
	ChargedMicro int64
	// UpstreamRequestID is the service's own correlation id, when it has one.
	UpstreamRequestID string
}

// Invoker calls managed-service operations. Errors, for the caller to map:
//   - *RateLimitedError: the service asked to wait (429 upstream_rate_limited);
//   - *UnavailableError: the service is down, overloaded or timed out
//     (503 service_unavailable);
//   - ErrBadUpstream (errors.Is): the answer was unusable or broke the price
//     contract (502);
//   - ErrNotConfigured (errors.Is): no invoker serves the service (503);
//   - *apierr.Error: the call itself was refused (validation_failed,
//     not_found, conflict), passed to the client as is.
//
// Whatever the error, nothing is charged.
type Invoker interface {
	Invoke(ctx context.Context, r Request) (Result, error)
}

var (
	// ErrBadUpstream means the service answered, but not with something the
	// platform can trust: malformed, oversized, an unexpected status, or a
	// charge outside 0..MaxChargeMicro.
	ErrBadUpstream = errors.New("upstream: bad answer from the managed service")
	// ErrNotConfigured means no invoker is registered for the service.
	ErrNotConfigured = errors.New("upstream: managed service not configured")
	// ErrCredentialRejected means the service answered 401 to a call that
	// carried connections: one of their credentials is no longer accepted,
	// and the caller marks the connections (connections.MarkUnauthorized).
	// It matches ErrBadUpstream too, so it maps like any unusable answer.
	ErrCredentialRejected = fmt.Errorf("%w: the service rejected a connection's credential", ErrBadUpstream)
)

// RateLimitedError is the service asking the caller to slow down.
type RateLimitedError struct {
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("upstream: rate limited, retry after %s", e.RetryAfter)
}

// UnavailableError is a service that cannot answer now: it said so (503),
// its gateway did (502, 504), or it did not answer in time.
type UnavailableError struct {
	RetryAfter time.Duration
	// Cause is the transport failure behind it, if any; for logs only.
	Cause error
}

func (e *UnavailableError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("upstream: unavailable, retry after %s: %v", e.RetryAfter, e.Cause)
	}
	return fmt.Sprintf("upstream: unavailable, retry after %s", e.RetryAfter)
}

func (e *UnavailableError) Unwrap() error { return e.Cause }

// checkCharge enforces the price contract on a result: a charge outside
// 0..MaxChargeMicro is the service's fault, and the call fails uncharged
// rather than charging more than was held.
func checkCharge(r Request, res Result) error {
	if res.ChargedMicro < 0 || res.ChargedMicro > r.MaxChargeMicro {
		return fmt.Errorf("%w: %s %s charged %d micro-credits, allowed 0..%d",
			ErrBadUpstream, r.ServiceID, r.OperationID, res.ChargedMicro, r.MaxChargeMicro)
	}
	return nil
}
