// Package platform is the Go client of the Platform API. Every operation of
// the route table is a method; ordinary API failures come back in the
// result envelope (Result.OK false, Result.Error set) rather
// than as Go errors, which are kept for transport failures that outlived the
// retries. Idempotent operations get one Idempotency-Key per logical call,
// reused on every retry, so a retried create never creates twice.
package platform

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

//go:generate go run ./internal/gen -in ../../shared/groups/public/publicapi/openapi.json -out zz_generated.go

// route is what a call needs of an operation, generated from the OpenAPI
// document (routeTable in zz_generated.go). Request and Response name the
// Go types of its JSON body and answer ("stream" for bytes), which the
// coverage test holds the Client's methods to.
type route struct {
	Method, Path      string
	Idem              bool
	Request, Response string
}

// maxUpload is the API's bound on a raw body (a file, a transfer part).
const maxUpload = 4 << 20

// Options configure a Client. Only BaseURL is required.
type Options struct {
	// BaseURL is the API's root, e.g. http://localhost:8080 (without /v1).
	BaseURL string
	// APIKey is the bearer key of every call, unless a call sets another
	// (WithAPIKey) or uses a credit token (WithCreditToken).
	APIKey string
	// HTTPClient sends the requests; nil is a client without a timeout
	// (calls are bounded by their context).
	HTTPClient *http.Client
	// MaxAttempts bounds the tries of one call, the first included;
	// zero means 3.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the exponential backoff (full jitter:
	// a uniform wait in [0, min(MaxDelay, BaseDelay·2^n)]); zero means
	// 200ms and 10s. A Retry-After of the server is waited out instead
	// when it is longer.
	BaseDelay, MaxDelay time.Duration
	// OnDeprecation is called when a response announces that its operation
	// is deprecated (Deprecation, RFC 9745) or sunset (Sunset, RFC 8594);
	// link is the Link header (the successor-version), if any.
	OnDeprecation func(op, deprecation, sunset, link string)
	// Sleep waits between attempts; nil waits on a timer, returning early
	// with ctx's error. Tests replace it to move a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
	// UserAgent is sent as User-Agent; empty is "platformapi-sdk-go".
	UserAgent string
}

// Client calls the Platform API. It is safe for concurrent use.
type Client struct {
	opts Options
	base string
	http *http.Client
}

// New returns a client for opts.
func New(opts Options) *Client {
	c := &Client{opts: opts, base: strings.TrimRight(opts.BaseURL, "/"), http: opts.HTTPClient}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.opts.MaxAttempts <= 0 {
		c.opts.MaxAttempts = 3
	}
	if c.opts.BaseDelay <= 0 {
		c.opts.BaseDelay = 200 * time.Millisecond
	}
	if c.opts.MaxDelay <= 0 {
		c.opts.MaxDelay = 10 * time.Second
	}
	if c.opts.Sleep == nil {
		c.opts.Sleep = sleep
	}
	if c.opts.UserAgent == "" {
		c.opts.UserAgent = "platformapi-sdk-go"
	}
	return c
}

// WithAPIKey returns a copy of the client that calls with key.
func (c *Client) WithAPIKey(key string) *Client {
	cp := *c
	cp.opts.APIKey = key
	return &cp
}

// APIError is an API failure (an application/problem+json answer).
type APIError struct {
	Status    int          `json:"status"`
	Code      string       `json:"code"`
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Detail    string       `json:"detail"`
	Errors    []FieldError `json:"errors,omitempty"`
	RequestID string       `json:"requestId"`
	// RetryAfter is the server's Retry-After, zero when absent.
	RetryAfter time.Duration `json:"-"`
	// Header holds the answer's headers (e.g. Payment-Required of a 402).
	Header http.Header `json:"-"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("platform api: %d %s: %s", e.Status, e.Code, e.Detail)
}

// Result is the client result envelope: OK with Value, or not
// OK with Error. Either way the status, request id and headers are there.
type Result[T any] struct {
	OK    bool
	Value T
	Error *APIError
	// Status is the HTTP status of the last attempt.
	Status    int
	RequestID string
	// Replayed is true when the server answered from its idempotency
	// store (Idempotent-Replayed: true): an earlier attempt took effect.
	Replayed bool
	// IdempotencyKey is the key the call used, empty for operations without.
	IdempotencyKey string
	// Attempts is how many requests the call made.
	Attempts int
	Header   http.Header
}

// CallOption changes one call.
type CallOption func(*call)

// WithProject selects the project of a call (X-Service-Project).
func WithProject(id string) CallOption { return WithHeader("X-Service-Project", id) }

// WithEndUser names the end user a call is made for (X-Service-End-User).
func WithEndUser(id string) CallOption { return WithHeader("X-Service-End-User", id) }

// WithIdempotencyKey sets the Idempotency-Key instead of a generated one:
// to retry a logical call across processes, send the same key again.
func WithIdempotencyKey(k string) CallOption { return func(c *call) { c.idemKey = k } }

// WithAPIKey calls with key instead of the client's.
func WithAPIKey(key string) CallOption { return func(c *call) { c.key = key } }

// WithCreditToken authenticates the call with a first-key credit token
// (X-Service-Credit-Token) instead of a bearer key: CreateAPIKey only.
func WithCreditToken(tok string) CallOption {
	return func(c *call) { c.key = ""; c.header.Set("X-Service-Credit-Token", tok) }
}

// WithHeader adds a request header.
func WithHeader(name, value string) CallOption { return func(c *call) { c.header.Set(name, value) } }

// ListOptions page a list: Limit 1–100 (0 is the server's default, 20) and
// the NextCursor of the previous page.
type ListOptions struct {
	Limit  int
	Cursor string
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// Page is one page of a list.
type Page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// call is one logical call: the route and everything to send.
type call struct {
	id      string
	route   route
	path    string
	query   url.Values
	header  http.Header
	key     string
	idemKey string
	// body makes a fresh reader per attempt; nil for none.
	body        func() io.Reader
	contentType string
}

func (c *Client) newCall(op string, params map[string]string, opts []CallOption) *call {
	rt, ok := routeTable[op]
	if !ok {
		panic("platform sdk: unknown operation " + op)
	}
	path := rt.Path
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(v))
	}
	cl := &call{id: op, route: rt, path: "/v1" + path, header: http.Header{}, key: c.opts.APIKey}
	for _, o := range opts {
		o(cl)
	}
	if rt.Idem && cl.idemKey == "" {
		cl.idemKey = NewIdempotencyKey()
	}
	return cl
}

func (cl *call) jsonBody(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("platform sdk: encode %s body: %w", cl.id, err)
	}
	cl.body = func() io.Reader { return bytes.NewReader(raw) }
	cl.contentType = "application/json"
	return nil
}

// NewIdempotencyKey returns 128 random bits, hex: the key of one logical call.
func NewIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "sdk_" + hex.EncodeToString(b)
}

// send performs the call with retries and returns the last response, its
// body unread, or a transport error once the attempts or ctx ran out.
func (c *Client) send(ctx context.Context, cl *call) (*http.Response, int, error) {
	var lastErr error
	for attempt := 1; ; attempt++ {
		res, err := c.once(ctx, cl)
		retry, wait := false, time.Duration(0)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, attempt, err
			}
			lastErr, retry = err, true
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
			retry, wait = true, retryAfter(res.Header)
		case res.StatusCode == http.StatusConflict && cl.idemKey != "" && inProgress(res):
			// An earlier attempt of this very call is still running on the
			// server (its answer was lost): wait for it, then replay.
			retry, wait = true, retryAfter(res.Header)
		}
		if !retry {
			return res, attempt, nil
		}
		if attempt >= c.opts.MaxAttempts {
			if err != nil {
				return nil, attempt, fmt.Errorf("platform sdk: %s after %d attempts: %w", cl.id, attempt, lastErr)
			}
			return res, attempt, nil
		}
		d := c.backoff(attempt)
		if wait > d {
			d = wait
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d && res != nil {
			// The wait would outlive the call: answer what the server said.
			return res, attempt, nil
		}
		if res != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
		}
		if err := c.opts.Sleep(ctx, d); err != nil {
			if lastErr == nil {
				lastErr = err
			}
			return nil, attempt, fmt.Errorf("platform sdk: %s: %w", cl.id, errors.Join(err, lastErr))
		}
	}
}

// inProgress reports whether a 409 is idempotency_request_in_progress,
// leaving the body readable.
func inProgress(res *http.Response) bool {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(raw))
	var p struct {
		Code string `json:"code"`
	}
	return json.Unmarshal(raw, &p) == nil && p.Code == "idempotency_request_in_progress"
}

func (c *Client) once(ctx context.Context, cl *call) (*http.Response, error) {
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.body != nil {
		body = cl.body()
	}
	req, err := http.NewRequestWithContext(ctx, cl.route.Method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	if cl.contentType != "" {
		req.Header.Set("Content-Type", cl.contentType)
	}
	if cl.key != "" {
		req.Header.Set("Authorization", "Bearer "+cl.key)
	}
	if cl.idemKey != "" {
		req.Header.Set("Idempotency-Key", cl.idemKey)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	c.deprecation(cl.id, res.Header)
	return res, nil
}

func (c *Client) deprecation(op string, h http.Header) {
	dep, sunset := h.Get("Deprecation"), h.Get("Sunset")
	if c.opts.OnDeprecation != nil && (dep != "" || sunset != "") {
		c.opts.OnDeprecation(op, dep, sunset, h.Get("Link"))
	}
}

// backoff is full jitter: uniform in [0, min(MaxDelay, BaseDelay·2^(n-1))].
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.opts.BaseDelay << min(attempt-1, 20)
	if ceil > c.opts.MaxDelay || ceil <= 0 {
		ceil = c.opts.MaxDelay
	}
	return time.Duration(mrand.Int64N(int64(ceil) + 1))
}

// retryAfter reads Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// envelope fills the parts of a result every answer has.
func envelope[T any](cl *call, res *http.Response, attempts int) Result[T] {
	return Result[T]{
		OK: res.StatusCode < 300, Status: res.StatusCode, RequestID: res.Header.Get("X-Request-Id"),
		Replayed: res.Header.Get("Idempotent-Replayed") == "true", IdempotencyKey: cl.idemKey, Attempts: attempts, Header: res.Header,
	}
}

// problem decodes a failure answer; a body that is not problem+json still
// yields its status and a code derived from it.
func problem(res *http.Response, raw []byte) *APIError {
	e := &APIError{}
	_ = json.Unmarshal(raw, e)
	e.Status = res.StatusCode
	if e.Code == "" {
		e.Code = "http_" + strconv.Itoa(res.StatusCode)
	}
	if e.Detail == "" && e.Title == "" {
		e.Detail = strings.TrimSpace(string(raw))
	}
	if e.RequestID == "" {
		e.RequestID = res.Header.Get("X-Request-Id")
	}
	e.RetryAfter = retryAfter(res.Header)
	e.Header = res.Header
	return e
}

// maxResponse bounds a JSON answer read into memory.
const maxResponse = 32 << 20

// do runs a JSON call and decodes the answer into T.
func do[T any](ctx context.Context, c *Client, cl *call) (Result[T], error) {
	res, attempts, err := c.send(ctx, cl)
	if err != nil {
		return Result[T]{Attempts: attempts, IdempotencyKey: cl.idemKey}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return Result[T]{Attempts: attempts, IdempotencyKey: cl.idemKey}, fmt.Errorf("platform sdk: %s: read answer: %w", cl.id, err)
	}
	r := envelope[T](cl, res, attempts)
	if !r.OK {
		r.Error = problem(res, raw)
		return r, nil
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Value); err != nil {
			return r, fmt.Errorf("platform sdk: %s: decode answer: %w", cl.id, err)
		}
	}
	return r, nil
}

// jsonCall builds and runs a call with an optional JSON body and query.
func jsonCall[T any](ctx context.Context, c *Client, op string, params map[string]string, q url.Values, body any, opts []CallOption) (Result[T], error) {
	cl := c.newCall(op, params, opts)
	cl.query = q
	if body != nil {
		if err := cl.jsonBody(body); err != nil {
			return Result[T]{}, err
		}
	}
	return do[T](ctx, c, cl)
}

// Download is a streamed answer: read Body and close it.
type Download struct {
	Body          io.ReadCloser
	ContentType   string
	ContentLength int64
	// SHA256 is X-Content-Sha256, the server's hash of the bytes.
	SHA256 string
	Header http.Header
}

// stream runs a call whose success answer is streamed, not decoded.
func stream(ctx context.Context, c *Client, cl *call) (Result[*Download], error) {
	res, attempts, err := c.send(ctx, cl)
	if err != nil {
		return Result[*Download]{Attempts: attempts, IdempotencyKey: cl.idemKey}, err
	}
	r := envelope[*Download](cl, res, attempts)
	if !r.OK {
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		r.Error = problem(res, raw)
		return r, nil
	}
	r.Value = &Download{Body: res.Body, ContentType: res.Header.Get("Content-Type"), ContentLength: res.ContentLength,
		SHA256: res.Header.Get("X-Content-Sha256"), Header: res.Header}
	return r, nil
}

// rawBody reads an upload into memory (bounded by max) so that a retry can
// send it again; the API bounds raw bodies at 4 MiB anyway.
func rawBody(cl *call, body io.Reader, contentType string, max int64) error {
	raw, err := io.ReadAll(io.LimitReader(body, max+1))
	if err != nil {
		return fmt.Errorf("platform sdk: %s: read upload: %w", cl.id, err)
	}
	if int64(len(raw)) > max {
		return fmt.Errorf("platform sdk: %s: upload larger than %d bytes", cl.id, max)
	}
	cl.body = func() io.Reader { return bytes.NewReader(raw) }
	cl.contentType = contentType
	return nil
}
