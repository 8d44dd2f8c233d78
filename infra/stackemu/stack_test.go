package stackemu_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/jsii-runtime-go"
	"github.com/ethereum/go-ethereum/common"

	"platformapi/infra/stackemu"
	"platformapi/infra/stacks"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/harness/lambdarie"
)

const moduleRoot = "../.."

// synthesize writes the stack's template as `cdk synth` makes it with the
// settings of cdk.json and settings (placeholder assets: the stack runs host
// builds instead).
func synthesize(t *testing.T, settings map[string]any) *stackemu.Template {
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
	for k, v := range settings {
		doc.Context[k] = v
	}
	// What the CLI sets: the functions' construct paths name their bootstraps.
	doc.Context["aws:cdk:enable-path-metadata"] = true
	app := awscdk.NewApp(&awscdk.AppProps{Context: &doc.Context, Outdir: jsii.String(filepath.Join(dir, "cdk.out")), AnalyticsReporting: jsii.Bool(false)})
	loaded, err := stacks.LoadSettings(app.Node(), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	stack := stacks.NewPlatformStack(app, stacks.StackID(loaded.Stage), &stacks.PlatformStackProps{Settings: loaded})
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

// built is the synthesized template, the host builds of its functions and
// the local chain the template's rpcUrls name, shared by the tests: the
// synth and the build are the slow part, jsii runs once per process, and
// the chain's endpoint is in the template.
var built struct {
	once     sync.Once
	took     phases // the synth and the build, logged by each test that uses them
	tmpl     []byte
	bin      string
	rie      string
	chain    *devchain.Chain
	chainDir string
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.chain != nil {
		_ = built.chain.Close()
	}
	for _, dir := range []string{built.bin, built.chainDir} {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// buildShared builds the functions into one directory of the user's cache
// shared by every checkout, where go build relinks only what changed (a
// link of the 27 is most of a minute; none changed is a second or two),
// and returns a private directory holding hard links to them, which the
// stack runs: a later build by another checkout replaces a file, never
// rewrites one, so the links keep what was built here. A lock keeps one
// build at a time. Where there is no user cache, it builds into a
// temporary directory.
func buildShared(names []string) (string, error) {
	cache, err := os.UserCacheDir()
	if err == nil {
		cache = filepath.Join(cache, "platformapi", "stack-bootstraps")
		if err = os.MkdirAll(filepath.Join(cache, "runs"), 0o755); err == nil {
			err = os.MkdirAll(filepath.Join(cache, "bin"), 0o755)
		}
	}
	if err != nil {
		dir, err := os.MkdirTemp("", "stack-bin")
		if err == nil {
			err = stackemu.BuildBootstraps(moduleRoot, dir, names)
		}
		return dir, err
	}
	lock, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	// Links a run that was killed left behind.
	if old, err := os.ReadDir(filepath.Join(cache, "runs")); err == nil {
		for _, d := range old {
			if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > 24*time.Hour {
				_ = os.RemoveAll(filepath.Join(cache, "runs", d.Name()))
			}
		}
	}
	bins := filepath.Join(cache, "bin")
	if err := stackemu.BuildBootstraps(moduleRoot, bins, names); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Join(cache, "runs"), "")
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if err := os.Link(filepath.Join(bins, n), filepath.Join(dir, n)); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

// template returns a fresh copy of the synthesized template, the functions
// built for it and the runtime interface emulator.
func template(t *testing.T) (tmpl *stackemu.Template, bin, rie string) {
	t.Helper()
	_ = awstest.Env(t)
	if testing.Short() {
		t.Skip("builds every function and runs the whole stack")
	}
	built.once.Do(func() {
		// The local chain under <dir>/chain, as functions/local keeps it,
		// so that `local fund --data-dir <dir>` funds through its RPC.
		if built.chainDir, built.err = os.MkdirTemp("", "stack-chain"); built.err != nil {
			return
		}
		if built.chain, built.err = devchain.Open(context.Background(), filepath.Join(built.chainDir, "chain"), devchain.Options{RPCAddr: "127.0.0.1:0"}); built.err != nil {
			return
		}
		// The functions are built while the template is synthesized (each
		// takes a core): by the declared list, which the template's list is
		// then checked against and any function it adds built.
		built.took.start()
		declared := make([]string, len(stacks.Functions))
		for i, f := range stacks.Functions {
			declared[i] = f.Name
		}
		building := make(chan error, 1)
		go func() {
			var err error
			built.bin, err = buildShared(declared)
			building <- err
		}()
		tm := synthesize(t, map[string]any{"rpcUrls": fmt.Sprintf("%d=%s", devchain.ChainID, built.chain.Endpoint())})
		built.took.lap("synth")
		if built.err = <-building; built.err != nil {
			return
		}
		built.took.lap("host build (beyond the synth)")
		names, err := tm.FunctionNames()
		if err != nil {
			built.err = err
			return
		}
		var undeclared []string
		for _, n := range names {
			if !slices.Contains(declared, n) {
				undeclared = append(undeclared, n)
			}
		}
		if len(undeclared) > 0 {
			if built.err = stackemu.BuildBootstraps(moduleRoot, built.bin, undeclared); built.err != nil {
				return
			}
		}

		if built.tmpl, built.err = json.Marshal(tm); built.err != nil {
			return
		}
		built.rie, built.err = lambdarie.Binary(moduleRoot)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	t.Logf("phases before this test (once per process): %s", &built.took)
	tmpl = &stackemu.Template{}
	if err := json.Unmarshal(built.tmpl, tmpl); err != nil {
		t.Fatal(err)
	}
	return tmpl, built.bin, built.rie
}

// up brings a template up on a private moto enforcing IAM and stops it when
// the test ends, logging each function's init duration.
func up(t *testing.T, tmpl *stackemu.Template, bin, rie string) *stackemu.Stack {
	t.Helper()
	began := time.Now()
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(awstest.Name(t, "stk"), ""))
	s, err := stackemu.Up(context.Background(), stackemu.Options{
		Template: tmpl, Name: name, Moto: filepath.Join(moduleRoot, ".ci", "with-moto"), Bootstraps: stackemu.BootstrapsIn(bin), RIE: rie,
		// A webhook retried after 2 s, not the schedule's 30: the walk
		// proves the retry, not the schedule (webhooks' own tests do).
		FunctionEnv:   append(stackemu.FunctionEnv(), "ALLOW_PRIVATE_WEBHOOKS=true", "WEBHOOK_RETRY_BACKOFF=2s"),
		ScheduleEvery: 5 * time.Second,
		Log:           slog.New(slog.NewTextHandler(testWriter{t}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stack up in %s", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		inits := s.InitDurations()
		keys := make([]string, 0, len(inits))
		for k := range inits {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("init %-16s %s", k, inits[k].Round(10*time.Microsecond))
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// denied lists the functions whose log shows a call IAM refused (or any
// other 403 from the emulator, such as a signature it would not accept).
func denied(t *testing.T, s *stackemu.Stack, tmpl *stackemu.Template) map[string]string {
	t.Helper()
	names, err := tmpl.FunctionNames()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		for _, line := range strings.Split(s.Logs(n), "\n") {
			if strings.Contains(line, "AccessDenied") || strings.Contains(line, "is not authorized to perform") || strings.Contains(line, "StatusCode: 403") {
				out[n] = line
				break
			}
		}
	}
	return out
}

// caller sends requests to the stack's HTTP API.
type caller struct {
	t   *testing.T
	url string
}

func (c caller) call(method, path, key string, body any, headers ...string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if raw, ok := body.([]byte); ok {
		rd = bytes.NewReader(raw)
	} else if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.url+path, rd)
	if _, ok := body.([]byte); ok {
		req.Header.Set("Content-Type", "application/octet-stream")
	} else if body != nil {
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
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var doc map[string]any
	_ = json.Unmarshal(raw, &doc)
	return resp.StatusCode, doc
}

// TestTheSynthesizedStackServesTheQuickStartWholeOnTheEmulators brings the
// template up (storage in a private moto through CloudFormation, every
// function under the runtime interface emulator with its role's
// credentials, IAM enforced) and drives it over HTTP only: health, a
// credit token redeemed into a root key, a charged invoke, its webhook
// delivered to a loopback receiver and retried through the SQS mapping
// after the receiver failed the first attempt, a database action and an
// export by the databases worker, a project's file stored and read, a
// managed wallet created, a durable run by the run worker, and /usage equal to what the balance lost
// once the log subscription and the stream rollup have run; then the
// wallet, funded on the local chain the template's rpcUrls name, sends
// ether from quote to confirmed through the wallets worker, the payee holds
// it on the chain and /usage counts the send's charge too, and the walk's
// audit events are listed whole, by pages and filtered. No function may
// meet a refused call on the way.
func TestTheSynthesizedStackServesTheQuickStartWholeOnTheEmulators(t *testing.T) {
	t.Parallel() // each brings up a stack of its own; together they wait once
	walk(t, false)
}

// The same walk with the wallet's send made while the run worker executes
// the durable run, so that the two workers settle on the one account at
// once: /usage still counts exactly what the balance lost. With
// STACK_CONCURRENT_WALK=1 (make stack-test, make stack-concurrent-test).
func TestTheSynthesizedStackCountsARunAndASendSettledAtOnce(t *testing.T) {
	if os.Getenv("STACK_CONCURRENT_WALK") != "1" {
		t.Skip("a third stack: STACK_CONCURRENT_WALK=1 runs it")
	}
	t.Parallel()
	walk(t, true)
}

// walk is the quick start walked over HTTP on a stack of its own; with
// concurrent the send is made right after the run, not once it settled.
func walk(t *testing.T, concurrent bool) {
	tmpl, bin, rie := template(t)
	var took phases
	took.start()
	s := up(t, tmpl, bin, rie)
	took.lap("up")
	defer func() {
		t.Logf("phases: %s", &took)
		if t.Failed() {
			for _, n := range []string{"webhook-worker", "audit-ingest", "audit-rollup", "services", "webhooks", "keys", "projects", "run-worker", "wallets", "wallets-worker", "wallets-recheck"} {
				t.Logf("%s log:\n%s", n, s.Logs(n))
			}
		}
	}()
	call := caller{t, s.URL}.call
	// The audit events are listed from here on, not over the default 90
	// days: see listAudit.
	since := time.Now().UTC().Add(-time.Minute)

	if code, h := call("GET", "/v1/health", "", nil); code != 200 || h["status"] != "ok" || h["backend"] != "aws" {
		t.Fatalf("health %d %v", code, h)
	}

	// The credit token is signed with the seed in the stack's secret, as
	// mint-credit-token does with CREDIT_TOKEN_SECRET_ARN.
	signer := signerFromStack(t, s.AWS, s)
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
	took.lap("key, webhook, invoke")
	// The audit events, listed while their ingest may still be behind and
	// the projects function is cold.
	listAudit(t, call, root, since, time.Time{}, "operation=services.invoke")
	took.lap("audit events listed")

	// A database provisioned and changed by an action, then exported by its
	// worker through the databases queue's mapping.
	if code, db := call("POST", "/v1/databases/account", root, map[string]any{}, "Idempotency-Key", "db-provision-0001"); code != 201 {
		t.Fatalf("provision: %d %v", code, db)
	}
	if code, r := call("POST", "/v1/databases/actions", root, map[string]any{"actions": []any{
		map[string]any{"type": "migrate", "id": "001", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)"},
		map[string]any{"type": "execute", "sql": "INSERT INTO t(name) VALUES (?), (?)", "params": []any{"a", "b"}},
	}}, "Idempotency-Key", "db-action-0001"); code != 200 {
		t.Fatalf("action: %d %v", code, r)
	}
	code, export := call("POST", "/v1/databases/transfers", root, map[string]any{"direction": "export"}, "Idempotency-Key", "db-export-0001")
	if code != 202 {
		t.Fatalf("export: %d %v", code, export)
	}
	// A project's file, stored in the files bucket and read back.
	code, project := call("POST", "/v1/projects", root, map[string]any{"name": "stack"}, "Idempotency-Key", "project-0001")
	if code != 201 {
		t.Fatalf("project: %d %v", code, project)
	}
	code, file := call("POST", "/v1/files", root, []byte("stack file"), "Idempotency-Key", "file-0001", "X-File-Name", "stack.txt", "X-Service-Project", fmt.Sprint(project["id"]))
	if code != 201 {
		t.Fatalf("file: %d %v", code, file)
	}
	if code, _ := call("GET", "/v1/files/"+fmt.Sprint(file["id"])+"/content", root, nil, "X-Service-Project", fmt.Sprint(project["id"])); code != 200 {
		t.Fatalf("file content: %d", code)
	}
	// A managed wallet, its key sealed with the envelope key (KMS).
	code, wallet := call("POST", "/v1/wallets", root, map[string]any{}, "Idempotency-Key", "wallet-0001")
	if code != 201 || !common.IsHexAddress(fmt.Sprint(wallet["address"])) {
		t.Fatalf("wallet: %d %v", code, wallet)
	}
	// A durable run, executed by the run worker through the runs queue's
	// mapping.
	code, run := call("POST", "/v1/runs", root, map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "stack"}}, "Idempotency-Key", "run-0001")
	if code != 202 {
		t.Fatalf("run: %d %v", code, run)
	}
	took.lap("database, file, wallet, run requests")

	// The wallet, funded on the local chain the template's RPC_URL_1337
	// names, sends ether: quoted and accepted by the wallets function,
	// signed and broadcast by the wallets worker through the wallets
	// queue's mapping, confirmed by the worker or the recheck schedule,
	// its 0.1 credits captured then and counted in /usage. After the run
	// has settled, or, concurrent, while the run worker executes it: the
	// two workers settle on the one account at once (see docs/stack.md).
	walletPath := "/v1/wallets/" + fmt.Sprint(wallet["id"])
	// A payee of this walk's own: the walks of one process share the chain.
	var payee common.Address
	if _, err := rand.Read(payee[:]); err != nil {
		t.Fatal(err)
	}
	const sent = 1_000_000_000_000_000 // 0.001 ETH
	send := func() string {
		t.Helper()
		if _, err := built.chain.Faucet().Fund(context.Background(), common.HexToAddress(fmt.Sprint(wallet["address"])), "ETH", big.NewInt(1e17)); err != nil {
			t.Fatal(err)
		}
		code, quote := call("POST", walletPath+"/transactions/quote", root, map[string]any{"chainId": devchain.ChainID, "to": payee.Hex(), "asset": "ETH", "amount": fmt.Sprint(sent)}, "Idempotency-Key", "wallet-quote-0001")
		if code != 201 {
			t.Fatalf("quote: %d %v", code, quote)
		}
		code, tx := call("POST", walletPath+"/transactions", root, map[string]any{"quoteId": quote["id"]}, "Idempotency-Key", "wallet-send-0001")
		if code != 202 {
			t.Fatalf("send: %d %v", code, tx)
		}
		took.lap("wallet funded, send accepted")
		return fmt.Sprint(tx["id"])
	}
	var txID string
	if concurrent {
		txID = send()
	}

	// The first attempt fails; the worker sets the message's visibility to
	// its backoff (WEBHOOK_RETRY_BACKOFF) and the mapping delivers it again.
	deadline := time.Now().Add(90 * time.Second)
	for len(rcv.seen()) < 2 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
	}
	if got := rcv.seen(); len(got) < 2 || got[0] != "service.invoked" || got[1] != "service.invoked" {
		t.Fatalf("deliveries %v, want service.invoked failed once and then delivered", got)
	}
	took.lap("webhook retried")

	until := func(what, path, field string, want ...string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			code, doc := call("GET", path, root, nil)
			for _, w := range want {
				if code == 200 && fmt.Sprint(doc[field]) == w {
					return doc
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d %v, want %s %v", what, code, doc, field, want)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	confirm := func(txID string) {
		t.Helper()
		tx := until("wallet send", walletPath+"/transactions/"+txID, "status", "confirmed", "failed")
		if tx["status"] != "confirmed" || fmt.Sprint(tx["chargedCredits"]) != "0.1" {
			t.Fatalf("wallet send %v, want confirmed and charged 0.1", tx)
		}
		took.lap("send confirmed")
		if got, err := built.chain.Client().BalanceAt(context.Background(), payee, nil); err != nil || got.Cmp(big.NewInt(sent)) != 0 {
			t.Fatalf("the payee holds %v wei (%v), want the %d sent", got, err, sent)
		}
	}
	until("export", "/v1/databases/transfers/"+fmt.Sprint(export["id"]), "status", "ready")
	if code, _ := call("GET", "/v1/databases/transfers/"+fmt.Sprint(export["id"])+"/archive", root, nil); code != 200 {
		t.Fatalf("archive: %d", code)
	}
	took.lap("export ready")
	run = until("run", "/v1/runs/"+fmt.Sprint(run["id"]), "status", "succeeded", "failed")
	if run["status"] != "succeeded" {
		t.Fatalf("run %v", run)
	}
	took.lap("run settled")

	// /usage equals what the balance lost: the requests' charges, brought
	// to audit-ingest by the log subscription and to the rollup by the
	// table's stream, and the run's, which the run worker makes.
	_, bal := call("GET", "/v1/credits/balance", root, nil)
	spent := micro(t, "50") - micro(t, bal["balance"])
	if runCharge := micro(t, run["chargedCredits"]); runCharge <= 0 || spent <= runCharge {
		t.Fatalf("the run charged %d µcredits of the %d spent", runCharge, spent)
	}
	usageCounts := func(spent int64) {
		t.Helper()
		began := time.Now()
		deadline := began.Add(60 * time.Second)
		var usage map[string]any
		var counted int64
		for {
			var code int
			code, usage = call("GET", "/v1/usage", root, nil)
			counted = charged(t, usage)
			if code == 200 && counted == spent || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if counted != spent {
			_, byOp := call("GET", "/v1/usage?groupBy=operation", root, nil)
			_, ledger := call("GET", "/v1/credits/ledger?limit=100", root, nil)
			t.Fatalf("usage counts %d µcredits, the balance fell %d: %v\nledger %v", counted, spent, byOp["data"], ledger)
		}
		t.Logf("usage counts the %d µcredits spent after %s", spent, time.Since(began).Round(time.Second))
	}
	if !concurrent {
		usageCounts(spent)
		took.lap("usage counted")
		txID = send()
	}
	confirm(txID)
	_, bal = call("GET", "/v1/credits/balance", root, nil)
	all := micro(t, "50") - micro(t, bal["balance"])
	if !concurrent && all != spent+100_000 || concurrent && all <= micro(t, run["chargedCredits"])+100_000 {
		t.Fatalf("the balance fell %d µcredits in all, want the run's %v, the send's 100000 and the requests' (%d before the send)", all, run["chargedCredits"], spent)
	}
	usageCounts(all)
	took.lap("send counted")
	auditListsAgree(t, call, root, since)
	took.lap("audit events listed, paged and filtered")

	// The schedules ran their targets.
	for _, n := range []string{"hold-sweeper", "webhook-outbox"} {
		if _, ok := s.InitDurations()[n]; !ok {
			t.Errorf("%s was never invoked by its schedule", n)
		}
	}
	if d := denied(t, s, tmpl); len(d) > 0 {
		t.Errorf("calls refused by IAM: %v", d)
	}
}

// listAudit lists the audit events from since (to until, when set) that a
// query selects, following nextCursor to the end, and fails the test on
// any answer but 200.
//
// Over the default range (90 days) a new account's list reads 16
// partitions a day, 1,440 queries, which the stack's moto answers one at a
// time with IAM checked: on a loaded machine more than the projects
// function's 10 s, and the answer is API Gateway's 500 (Task timed out).
// DynamoDB answers them 128 at a time; here the walk's range is listed.
func listAudit(t *testing.T, call func(method, path, key string, body any, headers ...string) (int, map[string]any), key string, since, until time.Time, query string) []map[string]any {
	t.Helper()
	q := url.Values{"since": {since.Format(time.RFC3339Nano)}}
	if !until.IsZero() {
		q.Set("until", until.Format(time.RFC3339Nano))
	}
	if query != "" {
		extra, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range extra {
			q[k] = v
		}
	}
	var out []map[string]any
	for {
		began := time.Now()
		code, page := call("GET", "/v1/audit-events?"+q.Encode(), key, nil)
		if code != 200 {
			t.Fatalf("GET /v1/audit-events?%s: %d %v after %s", q.Encode(), code, page, time.Since(began).Round(time.Millisecond))
		}
		data, _ := page["data"].([]any)
		for _, d := range data {
			ev, _ := d.(map[string]any)
			out = append(out, ev)
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			return out
		}
		q.Set("cursor", next)
	}
}

// auditListsAgree lists the audit events of every request answered so far
// whole, by small pages and filtered: every list answers 200, the pages
// hold the whole list in its order, and a filter selects exactly the
// events of the whole list it matches.
func auditListsAgree(t *testing.T, call func(method, path, key string, body any, headers ...string) (int, map[string]any), key string, since time.Time) {
	t.Helper()
	until := time.Now().UTC()
	// The log subscription ships about once a second: the events of the
	// requests answered before until are ingested after that.
	time.Sleep(3 * time.Second)
	all := listAudit(t, call, key, since, until, "limit=100")
	ids := func(evs []map[string]any) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = fmt.Sprint(e["id"])
		}
		return out
	}
	if len(all) < 10 {
		t.Fatalf("%d audit events before %s, want the walk's requests", len(all), until)
	}
	if paged := listAudit(t, call, key, since, until, "limit=4"); !slices.Equal(ids(paged), ids(all)) {
		t.Fatalf("audit events by pages of 4:\n%v\nwhole:\n%v", ids(paged), ids(all))
	}
	for _, filter := range []struct {
		query string
		keep  func(e map[string]any) bool
	}{
		{"operation=services.invoke", func(e map[string]any) bool {
			return strings.HasPrefix(fmt.Sprint(e["operation"]), "services.invoke.")
		}},
		{"status=202&limit=3", func(e map[string]any) bool { return fmt.Sprint(e["status"]) == "202" }},
	} {
		var want []map[string]any
		for _, e := range all {
			if filter.keep(e) {
				want = append(want, e)
			}
		}
		if got := listAudit(t, call, key, since, until, filter.query); len(want) == 0 || !slices.Equal(ids(got), ids(want)) {
			t.Fatalf("audit events %s: %v, want %v", filter.query, ids(got), ids(want))
		}
	}
}

// charged sums the usage report's chargedCredits, in micro-credits.
func charged(t *testing.T, usage map[string]any) int64 {
	var sum int64
	days, _ := usage["data"].([]any)
	for _, d := range days {
		day, _ := d.(map[string]any)
		results, _ := day["results"].([]any)
		for _, r := range results {
			res, _ := r.(map[string]any)
			sum += micro(t, res["chargedCredits"])
		}
	}
	return sum
}

// micro reads a credit amount as the API renders it ("49.99") into
// micro-credits, exactly.
func micro(t *testing.T, v any) int64 {
	t.Helper()
	r, ok := new(big.Rat).SetString(fmt.Sprint(v))
	if !ok {
		t.Fatalf("credit amount %v", v)
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	if !r.IsInt() {
		t.Fatalf("credit amount %v has more than six decimals", v)
	}
	return r.Num().Int64()
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

// withoutGrant removes from a function's role policies the statements that
// grant action, as an account missing that grant would have it.
func withoutGrant(t *testing.T, tmpl *stackemu.Template, function, action string) {
	t.Helper()
	var role string
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::Lambda::Function" || !strings.HasSuffix(fmt.Sprint(r.Metadata["aws:cdk:path"]), "/"+function+"/Resource") {
			continue
		}
		var ref struct {
			GetAtt []string `json:"Fn::GetAtt"`
		}
		if err := json.Unmarshal(r.Properties["Role"], &ref); err != nil || len(ref.GetAtt) == 0 {
			t.Fatalf("function %s has no role: %s", id, r.Properties["Role"])
		}
		role = ref.GetAtt[0]
	}
	if role == "" {
		t.Fatalf("no function %s", function)
	}
	removed := 0
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::IAM::Policy" || !strings.Contains(string(r.Properties["Roles"]), `"`+role+`"`) {
			continue
		}
		var doc struct {
			Version   string
			Statement []map[string]any
		}
		if err := json.Unmarshal(r.Properties["PolicyDocument"], &doc); err != nil {
			t.Fatal(err)
		}
		kept := doc.Statement[:0]
		for _, st := range doc.Statement {
			if strings.Contains(fmt.Sprint(st["Action"]), action) {
				removed++
				continue
			}
			kept = append(kept, st)
		}
		doc.Statement = kept
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		r.Properties["PolicyDocument"] = raw
		tmpl.Resources[id] = r
	}
	if removed == 0 {
		t.Fatalf("%s's role has no statement granting %s", function, action)
	}
}

// A grant the template lacks fails the function that needs it, and only
// that one, as in an account: without the keys function's
// secretsmanager:GetSecretValue on the credit token seed, redeeming a credit
// token is API Gateway's 500 and the keys function's log shows the call
// refused, while the other functions serve and meet no refusal.
func TestAMissingGrantFailsOnlyTheFunctionThatNeedsIt(t *testing.T) {
	t.Parallel() // each brings up a stack of its own; together they wait once
	tmpl, bin, rie := template(t)
	withoutGrant(t, tmpl, "keys", "secretsmanager:GetSecretValue")
	s := up(t, tmpl, bin, rie)
	call := caller{t, s.URL}.call

	if code, h := call("GET", "/v1/health", "", nil); code != 200 || h["status"] != "ok" {
		t.Fatalf("health %d %v", code, h)
	}
	tok, err := signerFromStack(t, s.AWS, s).Mint(50_000_000, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code, body := call("POST", "/v1/api-keys", "", map[string]string{"label": "root"}, "X-Service-Credit-Token", tok, "Idempotency-Key", "first-key-0001")
	if code != http.StatusInternalServerError {
		t.Fatalf("redeem without the grant: %d %v, want API Gateway's 500", code, body)
	}
	// Other functions still serve: an unauthenticated call is answered by
	// its function, not failed.
	if code, body := call("GET", "/v1/credits/balance", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("balance without a key: %d %v, want 401", code, body)
	}
	d := denied(t, s, tmpl)
	if line, ok := d["keys"]; !ok || !strings.Contains(line, "AccessDeniedException") || !strings.Contains(line, "secretsmanager:GetSecretValue") {
		t.Errorf("keys' log shows no refused secretsmanager:GetSecretValue:\n%s", s.Logs("keys"))
	}
	t.Logf("keys: %s", d["keys"])
	delete(d, "keys")
	if len(d) > 0 {
		t.Errorf("other functions met refusals: %v", d)
	}
}

// phases times a test's steps one after the other, so that a run over its
// budget says which step took the time.
type phases struct {
	last  time.Time
	steps []string
}

func (p *phases) start() { p.last = time.Now() }

// lap ends the step begun at the previous lap (or start).
func (p *phases) lap(step string) {
	now := time.Now()
	p.steps = append(p.steps, fmt.Sprintf("%s %s", step, now.Sub(p.last).Round(10*time.Millisecond)))
	p.last = now
}

func (p *phases) String() string { return strings.Join(p.steps, ", ") }
