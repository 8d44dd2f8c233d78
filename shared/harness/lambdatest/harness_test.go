package lambdatest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/base/routes"
	"platformapi/shared/harness/lambdarie"
)

// moduleRoot is where go.mod lives, seen from this package's directory.
const moduleRoot = "../../.."

var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
	rie       string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lambdatest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary returns the host build of a group's (or worker's) function. Every group is built
// in one go build on first use: the shared packages compile once and only
// the links repeat. The flags are the Makefile's bootstrap flags, as the
// benchmark's cold starts build: the binary run is the one deployed, its
// packages compile once for both, and a link without a symbol table or
// DWARF takes a third less. The pinned runtime interface emulator is built
// with them.
func binary(t *testing.T, group string) string {
	t.Helper()
	buildOnce.Do(func() {
		args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", binDir + string(filepath.Separator)}
		for _, g := range append(routes.Groups(), routes.MCP.Group, "webhook-worker", "run-worker", "wallets-worker", "wallets-recheck", "hold-sweeper", "trading-recheck") {
			args = append(args, "./functions/"+g)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = moduleRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			return
		}
		rie, buildErr = lambdarie.Binary(moduleRoot)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, group)
}

// backend is the storage a function runs on, given as its environment.
type backend struct {
	name string
	env  func(t *testing.T) []string
}

// backends lists the storage each case runs against; env is called once
// per function. A Lambda function runs on AWS only (its main builds the AWS
// adapters): here against the emulator, a fresh set of resources each.
var backends = []backend{
	{name: "aws", env: func(t *testing.T) []string { env, _ := awsFunctions(t); return env }},
}

// invokeTimeout is each function's timeout under the emulator, which ends an
// invocation that overruns it (lambdarie adds a margin for init): a hung
// function fails its test rather than the suite. It is not a measure of
// speed, and longer than the API functions' timeouts on AWS: every call a
// function makes here goes to the emulator, which a busy machine slows (at
// a load average of 15 the hold sweeper's first pass, a day of buckets,
// took more than 30 s), and each call has the shared AWS_CALL_TIMEOUT.
const invokeTimeout = 3 * time.Minute

// start runs a group's function under AWS's runtime interface emulator
// until the test ends; its init runs at the first invocation, as on Lambda.
func start(t *testing.T, group string, env []string) *lambdarie.Function {
	t.Helper()
	path := binary(t, group) // builds every function and the emulator once
	ctx, cancel := context.WithTimeout(context.Background(), invokeTimeout)
	defer cancel()
	fn, err := lambdarie.Start(ctx, lambdarie.Config{RIE: rie, Path: path, Name: group, MemoryMB: 256, Timeout: invokeTimeout, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fn.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("%s function output:\n%s", group, fn.Logs())
		}
	})
	return fn
}

// fixture reads an API Gateway v2 event from events/apigw.
func fixture(t *testing.T, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(moduleRoot, "events", "apigw", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if ev.Version != "2.0" {
		t.Fatalf("%s: version %q, want 2.0", name, ev.Version)
	}
	return ev
}

// response is an API Gateway v2 response with its body decoded.
type response struct {
	events.APIGatewayV2HTTPResponse
	body []byte
}

// header looks a response header up case-insensitively, as API Gateway does.
func (r response) header(name string) string {
	for k, v := range r.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func invoke(t *testing.T, fn *lambdarie.Function, ev events.APIGatewayV2HTTPRequest) response {
	t.Helper()
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := fn.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("invoke %s %s: %v", ev.RequestContext.HTTP.Method, ev.RawPath, err)
	}
	var r response
	if err := json.Unmarshal(out, &r.APIGatewayV2HTTPResponse); err != nil {
		t.Fatalf("response %q is not an API Gateway v2 response: %v", out, err)
	}
	r.body = []byte(r.Body)
	if r.IsBase64Encoded {
		if r.body, err = base64.StdEncoding.DecodeString(r.Body); err != nil {
			t.Fatalf("base64 body: %v", err)
		}
	}
	return r
}

// problem is the RFC 9457 body every error carries (shared/base/apierr).
type problem struct {
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Title     string `json:"title"`
	Detail    string `json:"detail"`
	RequestID string `json:"requestId"`
}

// checkAnswer holds every response to the API's envelope: a request
// id always, and for an error a problem+json body whose status, code and
// request id agree with the response.
func checkAnswer(t *testing.T, r response, wantStatus int, wantCode string) {
	t.Helper()
	if r.StatusCode != wantStatus {
		t.Fatalf("status %d, want %d; body %s", r.StatusCode, wantStatus, r.body)
	}
	id := r.header("X-Request-Id")
	if id == "" {
		t.Error("no X-Request-Id header")
	}
	if wantCode == "" {
		return
	}
	if ct := r.header("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	var p problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	if p.Code != wantCode || p.Status != wantStatus || p.RequestID != id || p.Title == "" || p.Detail == "" {
		t.Errorf("problem %+v, want code %s, status %d, requestId %s, a title and a detail", p, wantCode, wantStatus, id)
	}
}
