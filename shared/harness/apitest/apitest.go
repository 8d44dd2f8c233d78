// Package apitest is the black-box harness of the API: the groups a test
// binary uses (the core ones and those it Serves; their workers on demand)
// on real storage behind a real HTTP listener, with a settable clock, a
// scripted upstream service and helpers for the requests every test makes.
// Tests of every group package use it; a group's tests link only the groups
// they Serve (docs/testing.md).
package apitest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/memqueue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/testlog"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/credits/topup"
	"platformapi/shared/groups/runs"
	"platformapi/shared/groups/services/superbrain"
	"platformapi/shared/groups/webhooks"
)

// TopUpConfig is the server's x402 configuration in tests: Base Sepolia USDC.
var TopUpConfig = topup.TopUpConfig{
	Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
	AssetName: "USDC", AssetVersion: "2", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", MaxTimeoutSeconds: 300,
}

// RequestTimeout is the request deadline of a test server: every backend
// but the embedded one is an emulator, which queues racing requests (see
// teststores.DynamoDB) and slows down with its machine, so it gets longer.
func RequestTimeout(b teststores.Backend) time.Duration {
	if b.Name == teststores.Embedded.Name {
		return 10 * time.Second
	}
	return time.Minute
}

// Env is one API server on real storage behind a real HTTP listener.
type Env struct {
	T      *testing.T
	URL    string
	Clock  *testclock.Clock
	Store  store.Store
	Signer *credittoken.Signer
	Kernel *api.Kernel
	Logs   *testlog.Buffer
	// Audit records the server's audit events and rolls usage up in
	// process, on every backend (the emulator has no stream); Catchup
	// waits until every recorded event is counted.
	Audit *audit.Recorder
	// AuditDir is Audit's journal directory, which a restart replays.
	AuditDir string
	// Remote is core-research, an HTTP upstream the test scripts.
	Remote *FakeUpstream
	// Ports are what the groups were built on: the queues (in memory,
	// dead-lettering as declared), the buckets (the files bucket is S3 on
	// the emulator with DynamoDB).
	Ports ports.Ports
	// Sealer is the server's envelope key: a test that must know a sealed
	// secret (a wallet's key) to prove it is nowhere else opens it here.
	Sealer  envelope.Sealer
	workers map[string]work.Worker
	started map[string]bool
	mu      sync.Mutex
	rec     *recorder
	logger  *slog.Logger
}

// Options change what a test server allows.
type Options struct {
	// Env is the groups' configuration (docs/configuration.md); a
	// variable not in it is unset.
	Env map[string]string
	// Leave out a part to see the API answer without it.
	NoQueues                  []work.Queue
	NoSealer, NoRemoteService bool
	// Parts add what a group needs beyond the shared infrastructure, e.g.
	// its service on its own storage or the chains it reaches.
	Parts []Part
	// Routes are served on top of the route table (api.Config.ExtraRoutes)
	// with the handlers Register adds: a test's own operation, e.g. a
	// deprecated one, without one in the production table.
	Routes   []routes.Route
	Register func(*api.Kernel)
	// ShipAudit ships audit events on the access lines (as on Lambda)
	// instead of journaling them, and LogLevel is the logger's level.
	ShipAudit bool
	LogLevel  slog.Level
	// Audit wraps the server's audit recorder: a test that loses an
	// event, as a process that dies before writing it does.
	Audit func(*audit.Recorder) api.AuditRecorder
	// NoMetrics leaves the CloudWatch metrics off the access lines, as
	// the local server does (api.Config.NoMetrics).
	NoMetrics bool
}

// A Part adds what a group needs beyond the test server's ports: it
// returns that group built on them (each replaces the served group of its
// name), and the names of workers to run from the start.
type Part func(t *testing.T, b teststores.Backend, p ports.Ports) (groups []api.NewGroup, start []string)

// PaperCash is each trading book's starting paper cash in tests, dollars.
const PaperCash = "1000000"

// env is every test server's configuration under Options.Env: x402 top-ups
// of Base Sepolia USDC to a fixed address through the local facilitator
// (on the test clock), the paper venue's cash, and runs' attempt bound.
var env = map[string]string{
	"X402_PAY_TO": TopUpConfig.PayTo, "X402_MAX_TIMEOUT_SECONDS": strconv.FormatInt(TopUpConfig.MaxTimeoutSeconds, 10),
	"X402_FACILITATOR": "local", "TRADING_PAPER_CASH": PaperCash, "RUN_TIMEOUT": "10s",
}

// Backends are the storage backends this run can reach.
var Backends = teststores.All

// ForEachBackend runs a black-box test against every storage backend
// available to this run.
func ForEachBackend(t *testing.T, test func(t *testing.T, e *Env), opts ...Options) {
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) { test(t, NewOn(t, b, opts...)) })
	}
}

// New is a server on embedded storage.
func New(t *testing.T, opts ...Options) *Env { return NewOn(t, teststores.Embedded, opts...) }

// NewOn is a server on backend b with the core groups and those the test
// binary Serves.
func NewOn(t *testing.T, b teststores.Backend, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	c := testclock.New(time.Now().UTC().Truncate(time.Second))
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	signer, err := credittoken.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	rec, st := recording(b.Open(t, c.Now))
	sealer, err := localkey.Open(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	artifacts, err := fsblob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	declared, err := servedQueues()
	if err != nil {
		t.Fatal(err)
	}
	queues := map[string]queue.Queue{}
	for _, q := range declared {
		if slices.Contains(o.NoQueues, q) {
			continue
		}
		mq := memqueue.New(memqueue.WithDeadLetter(memqueue.New(), q.MaxReceives))
		t.Cleanup(func() { mq.Close() })
		queues[q.Name] = mq
	}
	remote := &FakeUpstream{}
	services := superbrain.Router(st, c.Now)
	if !o.NoRemoteService {
		services["core-research"] = remote
	}
	logs := &testlog.Buffer{}
	logger := slog.New(jsonlog.New(logs, o.LogLevel))
	config := maps.Clone(env)
	maps.Copy(config, o.Env)
	p := ports.Ports{
		Backend: b.Name, Store: st, Now: c.Now, Logger: logger, Sealer: sealer, Queues: queues,
		Artifacts: artifacts, Files: openFiles(t, b), Services: services,
		Getenv:  func(name string) string { return config[name] },
		Backoff: func(int) time.Duration { return 10 * time.Millisecond },
	}
	if o.NoSealer {
		p.Sealer = nil
	}
	if q := p.Queue(work.Webhooks); q != nil {
		p.Events = webhooks.NewRepo(webhooks.Config{Store: st, Sealer: p.Sealer, Queue: q, Now: c.Now})
	}
	var start []string
	var own []api.NewGroup
	for _, part := range o.Parts {
		groups, names := part(t, b, p)
		own = append(own, groups...)
		start = append(start, names...)
	}
	auditDir := filepath.Join(t.TempDir(), "audit")
	auditRec, err := audit.NewEmbeddedRecorder(st, c.Now, auditDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(auditRec.Close)
	if o.ShipAudit {
		auditRec = audit.NewShippingRecorder(logs, c.Now)
	}
	var recorder api.AuditRecorder = auditRec
	if o.Audit != nil {
		recorder = o.Audit(auditRec)
	}
	built, err := api.Build(served(), p)
	if err != nil {
		t.Fatal(err)
	}
	// A list names a group once; Core and a list may both name one.
	var groups []api.Group
	for _, g := range built {
		if !slices.ContainsFunc(groups, func(s api.Group) bool { return s.Name == g.Name }) {
			groups = append(groups, g)
		}
	}
	parts, err := api.Build(own, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range parts {
		i := slices.IndexFunc(groups, func(s api.Group) bool { return s.Name == g.Name })
		if i < 0 {
			t.Fatalf("apitest: a part builds group %s, which the test binary does not serve", g.Name)
		}
		groups[i] = g
	}
	// The embedded store's shared reads, as the local process hands them
	// to its kernel.
	shared, _ := st.(store.SharedReader)
	k, err := api.NewWith(api.Config{
		Store: st, SharedReads: shared, CreditTokens: signer, Now: c.Now, Logger: logger, RequestTimeout: RequestTimeout(b), Audit: recorder,
		ExtraRoutes: o.Routes, Events: p.Events, Sealer: p.Sealer, NoMetrics: o.NoMetrics,
	}, groups)
	if err != nil {
		t.Fatal(err)
	}
	if o.Register != nil {
		o.Register(k)
	}
	hs := httptest.NewServer(k)
	t.Cleanup(hs.Close)
	e := &Env{T: t, URL: hs.URL, Clock: c, Store: st, Signer: signer, Kernel: k, Logs: logs, Audit: auditRec, AuditDir: auditDir, Remote: remote,
		Ports: p, Sealer: sealer, workers: map[string]work.Worker{}, started: map[string]bool{}, rec: rec, logger: logger}
	for _, w := range api.WorkOf(groups).Workers {
		e.workers[w.Name] = w
	}
	for _, name := range start {
		e.StartWorker(name)
	}
	return e
}

// openFiles is the files bucket of backend b.
func openFiles(t *testing.T, b teststores.Backend) blob.Bucket {
	if b.Name == teststores.DynamoDB.Name {
		client, name := awstest.Bucket(t, awstest.Env(t))
		return s3blob.New(client, name)
	}
	bucket, err := fsblob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bucket
}

// Queue is declared queue q of the server, or nil where Options left it
// out.
func (e *Env) Queue(q work.Queue) queue.Queue { return e.Ports.Queue(q) }

// StartWorker runs the named worker (a queue's Consumer) through work.Run,
// the local process's loop, until the test ends; once, however often it
// is called. A worker the served groups lack fails the test.
func (e *Env) StartWorker(name string) {
	e.T.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started[name] {
		return
	}
	w, ok := e.workers[name]
	if !ok {
		e.T.Fatalf("apitest: no worker %q among the served groups", name)
	}
	e.started[name] = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); work.Run(ctx, e.logger, []work.Worker{w}, nil) }()
	e.T.Cleanup(func() { cancel(); <-done })
}

// Resp is a response as tests read it.
type Resp struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Str is a string field of the JSON body, or "".
func (r *Resp) Str(field string) string { s, _ := r.Body[field].(string); return s }

// Code is the problem+json error code, or "".
func (r *Resp) Code() string { return r.Str("code") }

// Req is a request as tests write it.
type Req struct {
	Method, Path string
	Key          string            // bearer secret
	Idem         string            // Idempotency-Key
	Headers      map[string]string // more headers
	Body         any               // JSON-encoded unless []byte
}

// DoRetrying sends r, and again under the same Idempotency-Key after each
// 503, as the answer tells a client to (what the request already did is
// completed or replayed), up to ten times half a second apart. A contended
// account answers 503 on a busy machine.
func (e *Env) DoRetrying(r Req) *Resp {
	e.T.Helper()
	res := e.Do(r)
	for try := 0; res.Status == http.StatusServiceUnavailable && try < 10; try++ {
		time.Sleep(500 * time.Millisecond)
		res = e.Do(r)
	}
	return res
}

// Do sends r.
func (e *Env) Do(r Req) *Resp {
	e.T.Helper()
	var rd io.Reader
	var sent []byte
	ct := ""
	switch b := r.Body.(type) {
	case nil:
	case []byte:
		rd, sent = bytes.NewReader(b), b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd, ct, sent = bytes.NewReader(raw), "application/json", raw
	}
	hr, err := http.NewRequestWithContext(context.Background(), r.Method, e.URL+r.Path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if ct != "" {
		hr.Header.Set("Content-Type", ct)
	}
	if r.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.Key)
	}
	if r.Idem != "" {
		hr.Header.Set("Idempotency-Key", r.Idem)
	}
	for k, v := range r.Headers {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	capture(r.Method, r.Path, hr.Header.Get("Content-Type"), sent, res.StatusCode, res.Header.Get("Content-Type"), raw)
	out := &Resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

// Must fails the test unless the response has the wanted status (and code).
func (e *Env) Must(r *Resp, status int, code ...string) *Resp {
	e.T.Helper()
	if r.Status != status || len(code) > 0 && r.Code() != code[0] {
		e.T.Fatalf("got %d %s, want %d %v: %s%s", r.Status, r.Code(), status, code, r.Raw, e.logOf(r))
	}
	return r
}

var idemSeq struct {
	sync.Mutex
	n int
}

// Idem returns a fresh idempotency key.
func Idem() string {
	idemSeq.Lock()
	defer idemSeq.Unlock()
	idemSeq.n++
	return "test-idem-" + time.Now().Format("150405.000000") + "-" + strings.Repeat("x", idemSeq.n%3) + strconv.Itoa(idemSeq.n)
}

// Token mints a credit token worth credits.
func (e *Env) Token(credits int64) string { return e.TokenMicro(credits * 1_000_000) }

// TokenMicro mints a credit token worth micro micro-credits.
func (e *Env) TokenMicro(micro int64) string {
	tok, err := e.Signer.Mint(micro, e.Clock.Now(), time.Hour)
	if err != nil {
		e.T.Fatal(err)
	}
	return tok
}

// RootKey creates a new account with credits and returns its root key.
func (e *Env) RootKey(credits int64, body map[string]any) (secret string, rec *Resp) {
	e.T.Helper()
	if body == nil {
		body = map[string]any{"label": "root"}
	}
	r := e.Must(e.Do(Req{Method: "POST", Path: "/v1/api-keys", Idem: Idem(), Body: body,
		Headers: map[string]string{"X-Service-Credit-Token": e.Token(credits)}}), 201)
	return r.Str("secret"), r
}

// Child creates a key under parent.
func (e *Env) Child(parent string, body map[string]any) (secret string, rec *Resp) {
	e.T.Helper()
	r := e.Must(e.Do(Req{Method: "POST", Path: "/v1/api-keys", Key: parent, Idem: Idem(), Body: body}), 201)
	return r.Str("secret"), r
}

// Balance reads the credit balance the key's account has.
func (e *Env) Balance(key string) float64 {
	e.T.Helper()
	return e.Must(e.Do(Req{Method: "GET", Path: "/v1/credits/balance", Key: key}), 200).Body["balance"].(float64)
}

// Strs reads a JSON array of strings.
func Strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// Stored renders the raw item at k with its document, to prove what is and
// is not at rest.
func (e *Env) Stored(k store.Key) string {
	e.T.Helper()
	it, err := e.Store.Get(context.Background(), k)
	if err != nil {
		e.T.Fatal(err)
	}
	return fmt.Sprintf("%v %s", it, it.Bytes(store.AttrDoc))
}

// Encodings are the forms in which a secret could hide at rest or in a
// log: plain, hex (either case), and base64 (standard and URL alphabets, at
// each of the three byte alignments it could have inside a longer value,
// e.g. a Basic header).
func Encodings(secret string) [][]byte {
	out := [][]byte{[]byte(secret), []byte(hex.EncodeToString([]byte(secret))), []byte(strings.ToUpper(hex.EncodeToString([]byte(secret))))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			s := enc.EncodeToString(append(bytes.Repeat([]byte{0}, k), secret...))
			start := 0
			if k > 0 {
				start = 4 // the first quantum mixes in the padding bytes
			}
			out = append(out, []byte(s[start:len(s)-4])) // the last may be padded or cut
		}
	}
	return out
}

// Holds reports whether raw holds secret in any of its Encodings.
func Holds(raw []byte, secret string) bool {
	for _, f := range Encodings(secret) {
		if bytes.Contains(raw, f) {
			return true
		}
	}
	return false
}

// WaitRun polls a run until it has finished (starting the run worker) and
// returns it.
func (e *Env) WaitRun(key, id string) *Resp {
	e.T.Helper()
	e.StartWorker(runs.Queue.Consumer)
	for range 1000 {
		r := e.Must(e.Do(Req{Method: "GET", Path: "/v1/runs/" + id, Key: key}), 200)
		if s := r.Str("status"); s != "queued" && s != "running" {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.T.Fatalf("run %s did not finish", id)
	return nil
}

// RawPartition renders every item of a partition as the store holds it.
func (e *Env) RawPartition(pk string) []byte {
	e.T.Helper()
	var out bytes.Buffer
	page, err := e.Store.Query(context.Background(), store.Query{PK: pk})
	if err != nil {
		e.T.Fatal(err)
	}
	for _, it := range page.Items {
		for name, v := range it {
			fmt.Fprintf(&out, "%s=", name)
			if b, ok := v.([]byte); ok {
				out.Write(b)
			} else {
				fmt.Fprint(&out, v)
			}
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// logOf is what the server logged for a failed request: the cause of a
// 5xx is logged, never answered.
func (e *Env) logOf(r *Resp) string {
	id := r.Header.Get("X-Request-Id")
	if r.Status < 500 || id == "" {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(e.Logs.String(), "\n") {
		if strings.Contains(l, id) {
			lines = append(lines, l)
		}
	}
	return "\nserver log:\n" + strings.Join(lines, "\n")
}
