// Package apierr is the single error catalogue of the API: every error a
// client can see has a stable snake_case code, one HTTP status and one title,
// and is written as RFC 9457 problem+json. Internal causes are kept for logs
// and never shown to clients.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable, documented error code.
type Code string

// The catalogue. Codes are part of the public API (clients branch on them);
// add, never rename.
const (
	ValidationFailed       Code = "validation_failed"
	IdempotencyKeyRequired Code = "idempotency_key_required"
	IdempotencyKeyInvalid  Code = "idempotency_key_invalid"
	ChecksumMismatch       Code = "checksum_mismatch"
	MissingCredentials     Code = "missing_credentials"
	InvalidAPIKey          Code = "invalid_api_key"
	KeyRevoked             Code = "key_revoked"
	KeyExpired             Code = "key_expired"
	KeyNotYetValid         Code = "key_not_yet_valid"
	IPDenied               Code = "ip_denied"
	InvalidCreditToken     Code = "invalid_credit_token"
	PaymentRequired        Code = "payment_required"
	InsufficientCredits    Code = "insufficient_credits"
	ScopeDenied            Code = "scope_denied"
	ServiceDenied          Code = "service_denied"
	OperationDenied        Code = "operation_denied"
	ProjectDenied          Code = "project_denied"
	DelegationDenied       Code = "delegation_denied"
	ApprovalRequired       Code = "approval_required"
	OriginDenied           Code = "origin_denied"
	ConnectionNotAllowed   Code = "connection_not_allowed"
	NotFound               Code = "not_found"
	MethodNotAllowed       Code = "method_not_allowed"
	PayloadTooLarge        Code = "payload_too_large"
	UnsupportedMediaType   Code = "unsupported_media_type"
	NotAcceptable          Code = "not_acceptable"
	IdempotencyKeyReused   Code = "idempotency_key_reused"
	IdempotencyInProgress  Code = "idempotency_request_in_progress"
	Conflict               Code = "conflict"
	ConnectionDisabled     Code = "connection_disabled"
	QuoteAlreadyUsed       Code = "quote_already_used"
	QuoteExpired           Code = "quote_expired"
	QuotaExceeded          Code = "quota_exceeded"
	LimitExceeded          Code = "limit_exceeded"
	UpstreamRateLimited    Code = "upstream_rate_limited"
	ServiceUnavailable     Code = "service_unavailable"
	NotImplemented         Code = "not_implemented"
	Internal               Code = "internal_error"

	// Managed databases.
	SQLError                Code = "sql_error"
	QueryNotReadonly        Code = "query_not_readonly"
	QueryTimeout            Code = "query_timeout"
	DatabaseExists          Code = "database_exists"
	DatabaseVersionMismatch Code = "database_version_mismatch"
	DatabaseBusy            Code = "database_busy"
	DatabaseFull            Code = "database_full"
	ArchiveInvalid          Code = "archive_invalid"

	// Managed wallets and swaps.
	PolicyDenied           Code = "policy_denied"
	PolicyRevisionConflict Code = "policy_revision_conflict"
	SelfApprovalDenied     Code = "self_approval_denied"
	SimulationFailed       Code = "simulation_failed"
	NoRoute                Code = "no_route"
	TransactionMismatch    Code = "transaction_mismatch"
)

type entry struct {
	status int
	title  string
}

var catalogue = map[Code]entry{
	ValidationFailed:       {http.StatusBadRequest, "Validation failed"},
	IdempotencyKeyRequired: {http.StatusBadRequest, "Idempotency-Key header required"},
	IdempotencyKeyInvalid:  {http.StatusBadRequest, "Idempotency-Key header invalid"},
	ChecksumMismatch:       {http.StatusBadRequest, "Checksum mismatch"},
	MissingCredentials:     {http.StatusUnauthorized, "Missing credentials"},
	InvalidAPIKey:          {http.StatusUnauthorized, "Invalid API key"},
	KeyRevoked:             {http.StatusUnauthorized, "API key revoked"},
	KeyExpired:             {http.StatusUnauthorized, "API key expired"},
	KeyNotYetValid:         {http.StatusUnauthorized, "API key not yet valid"},
	IPDenied:               {http.StatusForbidden, "Client address not allowed for this key"},
	InvalidCreditToken:     {http.StatusUnauthorized, "Invalid credit token"},
	PaymentRequired:        {http.StatusPaymentRequired, "Payment required"},
	InsufficientCredits:    {http.StatusPaymentRequired, "Insufficient credits"},
	ScopeDenied:            {http.StatusForbidden, "Scope denied"},
	ServiceDenied:          {http.StatusForbidden, "Service denied"},
	OperationDenied:        {http.StatusForbidden, "Operation denied"},
	ProjectDenied:          {http.StatusForbidden, "Project denied"},
	DelegationDenied:       {http.StatusForbidden, "Delegation denied"},
	ApprovalRequired:       {http.StatusForbidden, "Approval required"},
	OriginDenied:           {http.StatusForbidden, "Origin denied"},
	ConnectionNotAllowed:   {http.StatusForbidden, "Connection not allowed for this service"},
	NotFound:               {http.StatusNotFound, "Not found"},
	MethodNotAllowed:       {http.StatusMethodNotAllowed, "Method not allowed"},
	PayloadTooLarge:        {http.StatusRequestEntityTooLarge, "Payload too large"},
	UnsupportedMediaType:   {http.StatusUnsupportedMediaType, "Unsupported media type"},
	NotAcceptable:          {http.StatusNotAcceptable, "Not acceptable"},
	IdempotencyKeyReused:   {http.StatusConflict, "Idempotency key reused"},
	IdempotencyInProgress:  {http.StatusConflict, "Idempotent request in progress"},
	Conflict:               {http.StatusConflict, "Conflict"},
	ConnectionDisabled:     {http.StatusConflict, "Connection disabled"},
	QuoteAlreadyUsed:       {http.StatusConflict, "Quote already used"},
	QuoteExpired:           {http.StatusConflict, "Quote expired"},
	QuotaExceeded:          {http.StatusConflict, "Quota exceeded"},
	LimitExceeded:          {http.StatusTooManyRequests, "Limit exceeded"},
	UpstreamRateLimited:    {http.StatusTooManyRequests, "Upstream rate limited"},
	ServiceUnavailable:     {http.StatusServiceUnavailable, "Service unavailable"},
	NotImplemented:         {http.StatusNotImplemented, "Not implemented"},
	Internal:               {http.StatusInternalServerError, "Internal error"},

	SQLError:                {http.StatusBadRequest, "SQL error"},
	QueryNotReadonly:        {http.StatusForbidden, "Query is not read-only"},
	QueryTimeout:            {http.StatusRequestTimeout, "Query timed out"},
	DatabaseExists:          {http.StatusConflict, "Database exists"},
	DatabaseVersionMismatch: {http.StatusConflict, "Database version mismatch"},
	DatabaseBusy:            {http.StatusConflict, "Database busy"},
	DatabaseFull:            {http.StatusRequestEntityTooLarge, "Database full"},
	ArchiveInvalid:          {http.StatusUnprocessableEntity, "Archive invalid"},

	PolicyDenied:           {http.StatusForbidden, "Denied by the wallet's policy"},
	PolicyRevisionConflict: {http.StatusConflict, "Policy revision conflict"},
	SelfApprovalDenied:     {http.StatusForbidden, "A key in the requester's lineage cannot decide its approval"},
	SimulationFailed:       {http.StatusUnprocessableEntity, "Simulation failed"},
	NoRoute:                {http.StatusUnprocessableEntity, "No route"},
	TransactionMismatch:    {http.StatusUnprocessableEntity, "Transaction does not match the route"},
}

// Codes lists every code of the catalogue (for documentation).
func Codes() []Code {
	out := make([]Code, 0, len(catalogue))
	for c := range catalogue {
		out = append(out, c)
	}
	return out
}

// Status is the HTTP status of a code.
func (c Code) Status() int { return catalogue[c].status }

// Title is the human title of a code.
func (c Code) Title() string { return catalogue[c].title }

// FieldError points at one invalid part of a request.
type FieldError struct {
	Location string `json:"location" doc:"Where the problem is, e.g. body.scopes[2] or header.Idempotency-Key"`
	Message  string `json:"message"`
}

// Error is a client-visible error. It doubles as the problem+json body.
type Error struct {
	Type      string       `json:"type" doc:"URI reference identifying the problem type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Code      Code         `json:"code" doc:"Stable machine-readable error code"`
	Detail    string       `json:"detail"`
	RequestID string       `json:"requestId"`
	Errors    []FieldError `json:"errors,omitempty"`

	// Headers are set on the response (Retry-After, X-Service-Limit-Operation, ...).
	Headers map[string]string `json:"-"`
	// Cause is the internal error, logged but never sent.
	Cause error `json:"-"`
}

// New builds an error for a catalogue code.
func New(code Code, detail string, args ...any) *Error {
	if len(args) > 0 {
		detail = fmt.Sprintf(detail, args...)
	}
	e, ok := catalogue[code]
	if !ok {
		panic("apierr: unknown code " + string(code))
	}
	return &Error{Type: "about:blank", Title: e.title, Status: e.status, Code: code, Detail: detail}
}

// Invalid is a validation_failed error with field errors.
func Invalid(detail string, fields ...FieldError) *Error {
	e := New(ValidationFailed, "%s", detail)
	e.Errors = fields
	return e
}

// Field is shorthand for one validation problem.
func Field(location, message string, args ...any) FieldError {
	return FieldError{Location: location, Message: fmt.Sprintf(message, args...)}
}

// Wrap hides an internal failure behind a 500 (or a 503 when the cause says
// the backend is unavailable, see Unavailable).
func Wrap(cause error) *Error {
	var e *Error
	if errors.As(cause, &e) {
		return e
	}
	out := New(Internal, "The server failed to complete the request.")
	out.Cause = cause
	return out
}

// WithHeader returns a copy of e that also carries a response header. It
// never changes e, so package-level errors stay safe to share.
func (e *Error) WithHeader(k, v string) *Error {
	cp := *e
	cp.Headers = make(map[string]string, len(e.Headers)+1)
	for name, val := range e.Headers {
		cp.Headers[name] = val
	}
	cp.Headers[k] = v
	return &cp
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return string(e.Code) + ": " + e.Detail + ": " + e.Cause.Error()
	}
	return string(e.Code) + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Cause }

// GetStatus lets huma write the error with the right status.
func (e *Error) GetStatus() int { return e.Status }

// ContentType makes huma answer application/problem+json.
func (e *Error) ContentType(ct string) string {
	if ct == "application/json" || ct == "" {
		return "application/problem+json"
	}
	return ct
}
