package stackemu_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/jsii-runtime-go"

	"platformapi/infra/stackemu"
	"platformapi/infra/stacks"
	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/credittoken"
	"platformapi/shared/lambdarie"
)

const moduleRoot = "../.."

// synthesize writes the stack's template as `cdk synth` makes it with no
// settings (placeholder assets: the stack runs host builds instead).
func synthesize(t *testing.T) *stackemu.Template {
	t.Helper()
	dir := t.TempDir()
	assets := filepath.Join(dir, "build")
	for _, f := range stacks.Functions {
		if err := os.MkdirAll(filepath.Join(assets, f.Name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(assets, f.Name, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(moduleRoot, "cdk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Context map[string]any }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc.Context["assetDir"] = assets
	// What the CLI sets: the functions' construct paths name their bootstraps.
	doc.Context["aws:cdk:enable-path-metadata"] = true
	app := awscdk.NewApp(&awscdk.AppProps{Context: &doc.Context, Outdir: jsii.String(filepath.Join(dir, "cdk.out")), AnalyticsReporting: jsii.Bool(false)})
	settings, err := stacks.LoadSettings(app.Node(), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	stack := stacks.NewPlatformStack(app, stacks.StackID(settings.Stage), &stacks.PlatformStackProps{Settings: settings})
	out, err := json.Marshal(assertions.Template_FromStack(stack.Stack, nil).ToJSON())
	jsii.Close()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "template.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := stackemu.LoadTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// receiver is a loopback webhook receiver that fails its first delivery.
type receiver struct {
	mu       sync.Mutex
	attempts []string // the event type of each delivery attempt
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var ev struct{ Type string }
	_ = json.Unmarshal(body, &ev)
	r.mu.Lock()
	r.attempts = append(r.attempts, ev.Type)
	n := len(r.attempts)
	r.mu.Unlock()
	if n == 1 {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.attempts...)
}

// TestTheSynthesizedStackServesTheQuickStartWholeOnTheEmulators brings the
// template up (storage in moto through CloudFormation, every function under
// the runtime interface emulator) and drives it over HTTP only: health, a
// credit token redeemed into a root key, a charged invoke, its webhook
// delivered to a loopback receiver and retried through the SQS mapping
// after the receiver failed the first attempt, and /usage counting the
// requests once the log subscription and the stream rollup have run.
func TestTheSynthesizedStackServesTheQuickStartWholeOnTheEmulators(t *testing.T) {
	env := awstest.Env(t)
	if testing.Short() {
		t.Skip("builds every function and waits for a webhook retry")
	}
	tmpl := synthesize(t)
	names, err := tmpl.FunctionNames()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := stackemu.BuildBootstraps(moduleRoot, bin, names); err != nil {
		t.Fatal(err)
	}
	rie, err := lambdarie.Binary(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	began := time.Now()
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(awstest.Name(t, "stk"), ""))
	s, err := stackemu.Up(ctx, stackemu.Options{
		Template: tmpl, Name: name, AWS: env.Config, Bootstraps: stackemu.BootstrapsIn(bin), RIE: rie,
		FunctionEnv:   append(stackemu.FunctionEnv(), "ALLOW_PRIVATE_WEBHOOKS=true"),
		ScheduleEvery: 5 * time.Second,
		Log:           slog.New(slog.NewTextHandler(testWriter{t}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stack up in %s (%d functions)", time.Since(began).Round(time.Millisecond), len(names))
	defer func() {
		inits := s.InitDurations()
		keys := make([]string, 0, len(inits))
		for k := range inits {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("init %-16s %s", k, inits[k].Round(10*time.Microsecond))
		}
		if t.Failed() {
			for _, n := range []string{"webhook-worker", "audit-ingest", "audit-rollup", "services", "webhooks"} {
				t.Logf("%s log:\n%s", n, s.Logs(n))
			}
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()

	call := func(method, path, key string, body any, headers ...string) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, s.URL+path, rd)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var doc map[string]any
		_ = json.Unmarshal(raw, &doc)
		return resp.StatusCode, doc
	}

	if code, h := call("GET", "/v1/health", "", nil); code != 200 || h["status"] != "ok" || h["backend"] != "aws" {
		t.Fatalf("health %d %v", code, h)
	}

	// The credit token is signed with the seed in the stack's secret, as
	// mint-credit-token does with CREDIT_TOKEN_SECRET_ARN.
	signer := signerFromStack(t, env.Config, s)
	tok, err := signer.Mint(50_000_000, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code, key := call("POST", "/v1/api-keys", "", map[string]string{"label": "root"}, "X-Service-Credit-Token", tok, "Idempotency-Key", "first-key-0001")
	root, _ := key["secret"].(string)
	if code != 201 || !strings.HasPrefix(root, "psk_") {
		t.Fatalf("redeem: %d %v", code, key)
	}

	rcv := &receiver{}
	hook := httptest.NewServer(rcv)
	defer hook.Close()
	if code, wh := call("POST", "/v1/webhooks", root, map[string]any{"url": hook.URL, "events": []string{"service.invoked"}}, "Idempotency-Key", "hook-0001"); code != 201 {
		t.Fatalf("webhook: %d %v", code, wh)
	}

	code, inv := call("POST", "/v1/services/cloud-superbrain/invoke", root, map[string]any{"operationId": "memory.write", "input": map[string]string{"text": "stack"}}, "Idempotency-Key", "mem-write-0001")
	if code != 200 || fmt.Sprint(inv["chargedCredits"]) != "0.01" {
		t.Fatalf("invoke: %d %v", code, inv)
	}
	if code, bal := call("GET", "/v1/credits/balance", root, nil); code != 200 || fmt.Sprint(bal["balance"]) != "49.99" {
		t.Fatalf("balance after the charge: %d %v", code, bal)
	}

	// The first attempt fails; the worker sets the message's visibility to
	// its backoff (30 s) and the mapping delivers it again.
	deadline := time.Now().Add(90 * time.Second)
	for len(rcv.seen()) < 2 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
	}
	if got := rcv.seen(); len(got) != 2 || got[0] != "service.invoked" || got[1] != "service.invoked" {
		t.Fatalf("deliveries %v, want service.invoked failed once and then delivered", got)
	}

	// The access lines reach audit-ingest through the log subscription,
	// the stored events reach the rollup through the stream.
	deadline = time.Now().Add(60 * time.Second)
	var usage map[string]any
	for time.Now().Before(deadline) {
		code, usage = call("GET", "/v1/usage", root, nil)
		if code == 200 && nonEmpty(usage) {
			break
		}
		time.Sleep(time.Second)
	}
	if code != 200 || !nonEmpty(usage) {
		t.Fatalf("usage %d %v, want the requests counted", code, usage)
	}
	t.Logf("usage counted after %s", time.Since(deadline.Add(-60*time.Second)).Round(time.Second))

	// The schedules ran their targets.
	for _, n := range []string{"hold-sweeper", "webhook-outbox"} {
		if _, ok := s.InitDurations()[n]; !ok {
			t.Errorf("%s was never invoked by its schedule", n)
		}
	}
}

// nonEmpty: some day of the usage report counts something.
func nonEmpty(usage map[string]any) bool {
	days, _ := usage["data"].([]any)
	for _, d := range days {
		if day, ok := d.(map[string]any); ok {
			if results, ok := day["results"].([]any); ok && len(results) > 0 {
				return true
			}
		}
	}
	return false
}

func signerFromStack(t *testing.T, cfg aws.Config, s *stackemu.Stack) *credittoken.Signer {
	t.Helper()
	for id, arn := range s.Physical {
		if !strings.HasPrefix(id, "CreditTokenSeed") {
			continue
		}
		out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: &arn})
		if err != nil {
			t.Fatal(err)
		}
		seed := sha256.Sum256([]byte(aws.ToString(out.SecretString)))
		signer, err := credittoken.NewSigner(seed[:])
		if err != nil {
			t.Fatal(err)
		}
		return signer
	}
	t.Fatal("the stack has no CreditTokenSeed secret")
	return nil
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
