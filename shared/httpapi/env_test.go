package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/credits"
	"platformapi/shared/credittoken"
	"platformapi/shared/httpapi"
	"platformapi/shared/store"
	"platformapi/shared/store/teststores"
	"platformapi/shared/superbrain"
	"platformapi/shared/upstream"
	"platformapi/shared/x402/localfacilitator"
)

// clock is a settable clock shared by the server and its store, so tests can
// move time to expire keys, windows, leases and claims.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// topUpConfig is the server's x402 configuration in tests: Base Sepolia USDC.
var topUpConfig = credits.TopUpConfig{
	Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
	AssetName: "USDC", AssetVersion: "2", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", MaxTimeoutSeconds: 300,
}

// requestTimeout is the request deadline of a test server: the emulator
// queues racing requests (see teststores.DynamoDB), so it gets longer.
func requestTimeout(b teststores.Backend) time.Duration {
	if b.Name == teststores.DynamoDB.Name {
		return time.Minute
	}
	return 10 * time.Second
}

// env is one API server on real storage behind a real HTTP listener.
type env struct {
	t      *testing.T
	url    string
	clock  *clock
	store  store.Store
	signer *credittoken.Signer
	srv    *httpapi.Server
	logs   *syncBuffer
	remote *fakeUpstream // core-research, an HTTP upstream the test scripts
}

// syncBuffer collects the server's log lines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// forEachBackend runs a black-box test against every storage backend
// available to this run.
func forEachBackend(t *testing.T, test func(t *testing.T, e *env)) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) { test(t, newEnvOn(t, b)) })
	}
}

func newEnv(t *testing.T) *env { return newEnvOn(t, embedded) }

func newEnvOn(t *testing.T, b teststores.Backend) *env {
	t.Helper()
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	signer, err := credittoken.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	st := b.Open(t, c.Now)
	remote := &fakeUpstream{}
	logs := &syncBuffer{}
	srv, err := httpapi.New(httpapi.Deps{
		Store: st, CreditTokens: signer, Now: c.Now, Backend: b.Name,
		TopUp: topUpConfig, Facilitator: localfacilitator.New(st, localfacilitator.Config{Now: c.Now}),
		Services:       upstream.Router{superbrain.ServiceID: superbrain.New(st, c.Now), "core-research": remote},
		Schemas:        schemas(),
		Logger:         slog.New(slog.NewJSONHandler(logs, nil)),
		RequestTimeout: requestTimeout(b),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{t: t, url: hs.URL, clock: c, store: st, signer: signer, srv: srv, logs: logs, remote: remote}
}

type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r *resp) str(field string) string { s, _ := r.body[field].(string); return s }

// code is the problem+json error code, or "".
func (r *resp) code() string { return r.str("code") }

type req struct {
	method, path string
	key          string            // bearer secret
	idem         string            // Idempotency-Key
	headers      map[string]string // more headers
	body         any               // JSON-encoded unless []byte
}

func (e *env) do(r req) *resp {
	e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := r.body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(raw), "application/json"
	}
	hr, err := http.NewRequestWithContext(context.Background(), r.method, e.url+r.path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct != "" {
		hr.Header.Set("Content-Type", ct)
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.idem != "" {
		hr.Header.Set("Idempotency-Key", r.idem)
	}
	for k, v := range r.headers {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := &resp{status: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// must fails the test unless the response has the wanted status (and code).
func (e *env) must(r *resp, status int, code ...string) *resp {
	e.t.Helper()
	if r.status != status || len(code) > 0 && r.code() != code[0] {
		e.t.Fatalf("got %d %s, want %d %v: %s", r.status, r.code(), status, code, r.raw)
	}
	return r
}

var idemSeq struct {
	sync.Mutex
	n int
}

// idem returns a fresh idempotency key.
func idem() string {
	idemSeq.Lock()
	defer idemSeq.Unlock()
	idemSeq.n++
	return "test-idem-" + time.Now().Format("150405.000000") + "-" + strings.Repeat("x", idemSeq.n%3) + itoa(idemSeq.n)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// token mints a credit token worth credits.
func (e *env) token(credits int64) string { return e.tokenMicro(credits * 1_000_000) }

// tokenMicro mints a credit token worth micro micro-credits.
func (e *env) tokenMicro(micro int64) string {
	tok, err := e.signer.Mint(micro, e.clock.Now(), time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// rootKey creates a new account with credits and returns its root key.
func (e *env) rootKey(credits int64, body map[string]any) (secret string, rec *resp) {
	e.t.Helper()
	if body == nil {
		body = map[string]any{"label": "root"}
	}
	r := e.must(e.do(req{method: "POST", path: "/v1/api-keys", idem: idem(), body: body,
		headers: map[string]string{"X-Service-Credit-Token": e.token(credits)}}), 201)
	return r.str("secret"), r
}

// child creates a key under parent.
func (e *env) child(parent string, body map[string]any) (secret string, rec *resp) {
	e.t.Helper()
	r := e.must(e.do(req{method: "POST", path: "/v1/api-keys", key: parent, idem: idem(), body: body}), 201)
	return r.str("secret"), r
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
