package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/outbound"
)

// The wire protocol of a remote managed service (documented for service
// authors in HTTP's doc comment).
const (
	HeaderRequestID         = "X-Request-Id"
	HeaderIdempotencyKey    = "Idempotency-Key"
	HeaderMaxChargeCredits  = "X-Max-Charge-Credits"
	HeaderChargedCredits    = "X-Charged-Credits"
	HeaderUpstreamRequestID = "X-Upstream-Request-Id"
)

// Defaults of HTTPConfig.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// HTTPConfig is the operator's configuration of one remote service.
type HTTPConfig struct {
	// BaseURL is the service root. It must be https; plain http is allowed
	// only to a loopback host, so the credential never crosses a network in
	// clear text.
	BaseURL string
	// Timeout bounds one call, reading the answer included.
	Timeout time.Duration
	// CredentialHeader and Credential are sent verbatim on every call, e.g.
	// "Authorization" and "Bearer abc", or "X-Api-Key" and "abc".
	CredentialHeader string
	Credential       string
	// MaxResponseBytes bounds an answer body; a longer one is ErrBadUpstream.
	MaxResponseBytes int64
}

// HTTP is the Invoker of a remote managed service. The protocol:
//
//	POST {BaseURL}/operations/{operationId}
//	Content-Type: application/json
//	X-Request-Id: <platform correlation id>
//	X-Max-Charge-Credits: <the most the call may charge, decimal credits>
//	<CredentialHeader>: <Credential>
//	<one header per connection the call names; see Credential>
//
//	{"input": <operation input>, "context": {"accountId": "...", "projectId": "...", "endUser": "..."}}
//
// (projectId and endUser are omitted when the call has none). The answers:
//
//   - 2xx with body {"output": <any JSON>} and header X-Charged-Credits, the
//     exact charge as decimal credits ("0.015"; at most six decimals; "0"
//     when free). Missing or malformed, or above X-Max-Charge-Credits:
//     ErrBadUpstream, nothing charged. X-Upstream-Request-Id, optional, is
//     the service's correlation id.
//   - 429 → *RateLimitedError; 503, 502, 504 → *UnavailableError; each with
//     the service's Retry-After (seconds or HTTP-date; 1 s when absent;
//     clamped to MinRetryAfter..MaxRetryAfter). A timeout or an unreachable
//     service is an *UnavailableError too.
//   - 400 and 422 → apierr validation_failed, 404 → not_found, 409 →
//     conflict, with the problem+json "detail" and "errors" [{location,
//     message}] the service sent, bounded.
//   - 401 to a call that carried connections → ErrCredentialRejected.
//   - anything else (401, 403, 500, a redirect, ...) → ErrBadUpstream.
//
// Nothing is charged on any failure. A call that times out may still have
// run upstream; X-Request-Id lets the service recognise a repeat.
type HTTP struct {
	base     string
	header   string
	value    string
	maxBytes int64
	client   *http.Client
	now      func() time.Time
}

var _ Invoker = (*HTTP)(nil)

// NewHTTP validates cfg and returns the invoker. It is safe for concurrent use.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	base, err := outbound.BaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	if (cfg.CredentialHeader == "") != (cfg.Credential == "") {
		return nil, errors.New("upstream: CredentialHeader and Credential go together")
	}
	h := &HTTP{base: base, header: cfg.CredentialHeader, value: cfg.Credential, maxBytes: cfg.MaxResponseBytes, now: time.Now}
	if h.maxBytes <= 0 {
		h.maxBytes = DefaultMaxResponseBytes
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	h.client = outbound.Client(timeout)
	return h, nil
}

type callContext struct {
	AccountID string `json:"accountId"`
	ProjectID string `json:"projectId,omitempty"`
	EndUser   string `json:"endUser,omitempty"`
}

type call struct {
	Input   json.RawMessage `json:"input"`
	Context callContext     `json:"context"`
}

// Invoke calls the remote operation.
func (h *HTTP) Invoke(ctx context.Context, r Request) (Result, error) {
	if r.MaxChargeMicro < 0 {
		return Result{}, fmt.Errorf("upstream: %s: negative MaxChargeMicro %d", r.OperationID, r.MaxChargeMicro)
	}
	body, err := json.Marshal(call{Input: r.Input, Context: callContext{AccountID: r.AccountID, ProjectID: r.ProjectID, EndUser: r.EndUser}})
	if err != nil {
		return Result{}, fmt.Errorf("upstream: encode %s: %w", r.OperationID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/operations/"+url.PathEscape(r.OperationID), bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("upstream: %s: %w", r.OperationID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(HeaderMaxChargeCredits, formatCredits(r.MaxChargeMicro))
	if r.IdempotencyKey != "" {
		req.Header.Set(HeaderIdempotencyKey, r.IdempotencyKey)
	}
	if r.RequestID != "" {
		req.Header.Set(HeaderRequestID, r.RequestID)
	}
	if h.header != "" {
		req.Header.Set(h.header, h.value)
	}
	if err := h.setCredentials(req.Header, r.Connections); err != nil {
		return Result{}, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return Result{}, h.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, h.maxBytes+1))
	if err != nil {
		return Result{}, h.transportError(ctx, err)
	}
	oversized := int64(len(data)) > h.maxBytes
	if resp.StatusCode/100 != 2 {
		if oversized { // the status still says what happened; the body is not read
			data = nil
		}
		return Result{}, h.statusError(resp, data, len(r.Connections) > 0)
	}
	if oversized {
		return Result{}, fmt.Errorf("%w: answer exceeds %d bytes", ErrBadUpstream, h.maxBytes)
	}
	res, err := success(resp.Header, data)
	if err != nil {
		return Result{}, err
	}
	if err := checkCharge(r, res); err != nil {
		return Result{}, err
	}
	return res, nil
}

// transportError classifies a failure to get an answer. The caller going
// away is reported as such; anything else (timeout, refused connection,
// reset) is the service being unavailable.
func (h *HTTP) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("upstream: call abandoned: %w", ctx.Err())
	}
	return &UnavailableError{RetryAfter: DefaultRetryAfter, Cause: err}
}

// success reads a 2xx answer.
func success(hdr http.Header, data []byte) (Result, error) {
	var a answer
	if err := decodeObject(data, &a); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrBadUpstream, err)
	}
	if a.Output == nil {
		return Result{}, fmt.Errorf("%w: answer has no output", ErrBadUpstream)
	}
	charged, err := parseCredits(hdr.Get(HeaderChargedCredits))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s: %v", ErrBadUpstream, HeaderChargedCredits, err)
	}
	return Result{Output: a.Output, ChargedMicro: charged, UpstreamRequestID: correlationID(hdr.Get(HeaderUpstreamRequestID))}, nil
}

// statusError maps a non-2xx answer.
func (h *HTTP) statusError(resp *http.Response, data []byte, withConnections bool) error {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		if withConnections {
			return ErrCredentialRejected
		}
	case http.StatusTooManyRequests:
		return &RateLimitedError{RetryAfter: retryAfter(resp.Header.Get("Retry-After"), h.now())}
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return &UnavailableError{RetryAfter: retryAfter(resp.Header.Get("Retry-After"), h.now())}
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return refusal(apierr.ValidationFailed, "The service rejected the input.", data)
	case http.StatusNotFound:
		return refusal(apierr.NotFound, "The service found no such resource.", data)
	case http.StatusConflict:
		return refusal(apierr.Conflict, "The service refused the operation in its current state.", data)
	}
	return fmt.Errorf("%w: answered %d", ErrBadUpstream, resp.StatusCode)
}

// refusal passes on a service's refusal of the call, with its detail and
// at most 20 field errors, each bounded, so a service cannot flood a client.
func refusal(code apierr.Code, fallback string, data []byte) *apierr.Error {
	var p problem
	if decodeObject(data, &p) != nil {
		p = problem{}
	}
	if strings.TrimSpace(p.Detail) == "" {
		p.Detail = fallback
	}
	e := apierr.New(code, "%s", clip(p.Detail, 500))
	for i, f := range p.Errors {
		if i == 20 {
			break
		}
		e.Errors = append(e.Errors, apierr.FieldError{Location: clip(f.Location, 200), Message: clip(f.Message, 500)})
	}
	return e
}
