package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	kflate "github.com/klauspost/compress/flate"

	"platformapi/shared/adapters/testkit/testlog"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds this command once per test run: the tests drive the real
// process, its flags, its signals and its data directory.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "local-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "local")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type server struct {
	cmd  *exec.Cmd
	base string
	logs *testlog.Buffer
}

// linesWith is the lines of logs that contain s.
func linesWith(logs, s string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// start runs the server on a free port with the given environment.
func start(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), append([]string{"ADDR=127.0.0.1:0"}, env...)...)
	stdout, _ := cmd.StdoutPipe()
	logs := &testlog.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- rest
			}
		}
	}()
	select {
	case base := <-lines:
		return &server{cmd: cmd, base: base, logs: logs}
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not start: %s", logs)
	}
	return nil
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("unclean exit: %v\n%s", err, s.logs)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

func call(t *testing.T, method, url string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

func mintToken(t *testing.T, env []string) string {
	t.Helper()
	cmd := exec.Command(binary(t), "mint-credit-token", "--credits", "42")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mint: %v", err)
	}
	tok := strings.TrimSpace(string(out))
	if strings.Contains(tok, "\n") || !strings.HasPrefix(tok, "ct1.") {
		t.Fatalf("mint printed %q, want one token line", out)
	}
	return tok
}

// walkthrough is the README's first request, against a running process, and
// proves data survives a restart.
func walkthrough(t *testing.T, env []string, args ...string) {
	srv := start(t, env, args...)
	if code, body := call(t, "GET", srv.base+"/health", nil, ""); code != 200 || body["status"] != "ok" {
		t.Fatalf("health: %d %v", code, body)
	}
	tok := mintToken(t, env) // while the server runs, same DATA_DIR
	code, key := call(t, "POST", srv.base+"/v1/api-keys", map[string]string{
		"X-Service-Credit-Token": tok, "Idempotency-Key": "first-key-001", "Content-Type": "application/json"}, `{"label":"root"}`)
	if code != 201 {
		t.Fatalf("create key: %d %v", code, key)
	}
	secret := key["secret"].(string)
	auth := map[string]string{"Authorization": "Bearer " + secret}
	if code, bal := call(t, "GET", srv.base+"/v1/credits/balance", auth, ""); code != 200 || bal["balance"] != 42.0 {
		t.Fatalf("balance: %d %v", code, bal)
	}
	spendAndSeeItInUsage(t, srv, secret, "walk-write-001", 10_000)
	srv.stop(t)

	again := start(t, env)
	if code, bal := call(t, "GET", again.base+"/v1/credits/balance", auth, ""); code != 200 || bal["balance"] != 41.99 {
		t.Fatalf("after restart: %d %v", code, bal)
	}
	spendAndSeeItInUsage(t, again, secret, "walk-write-002", 20_000)
	if code, body := call(t, "POST", again.base+"/v1/api-keys", map[string]string{
		"X-Service-Credit-Token": tok, "Idempotency-Key": "first-key-002", "Content-Type": "application/json"}, `{}`); code != 401 || body["code"] != "invalid_credit_token" {
		t.Fatalf("second redemption after restart: %d %v", code, body)
	}
	again.stop(t)
	if strings.Contains(srv.logs.String()+again.logs.String(), secret) {
		t.Fatal("a secret reached the logs")
	}
}

func TestEmbeddedServerWalkthroughSurvivesRestart(t *testing.T) {
	walkthrough(t, []string{"DATA_DIR=" + t.TempDir()})
}

func TestAWSBackendWalkthroughSurvivesRestart(t *testing.T) {
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Skip("AWS_ENDPOINT_URL not set; make test runs this against moto")
	}
	suffix := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:20] + time.Now().Format("150405")
	env := []string{"BACKEND=aws", "DATA_DIR=" + t.TempDir(), "TABLE_NAME=t-" + suffix, "WEBHOOK_QUEUE_NAME=q-" + suffix, "KMS_KEY_ID=alias/k-" + suffix,
		"FILES_BUCKET=f-" + suffix, "ARCHIVES_BUCKET=a-" + suffix, "ARTIFACTS_BUCKET=r-" + suffix, "RUNS_QUEUE_NAME=r-" + suffix}
	walkthrough(t, env, "--create-resources")
}

func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	env := []string{"DATA_DIR=" + t.TempDir()}
	srv := start(t, env)
	tok := mintToken(t, env)
	type result struct {
		code int
		err  error
	}
	results := make(chan result, 20)
	for i := 0; i < 20; i++ {
		go func(i int) {
			req, _ := http.NewRequest("POST", srv.base+"/v1/api-keys", strings.NewReader(`{}`))
			req.Header.Set("X-Service-Credit-Token", tok)
			req.Header.Set("Idempotency-Key", "shutdown-"+strings.Repeat("x", i+1))
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- result{err: err}
				return
			}
			res.Body.Close()
			results <- result{code: res.StatusCode}
		}(i)
	}
	time.Sleep(5 * time.Millisecond)
	srv.stop(t)
	for i := 0; i < 20; i++ {
		r := <-results
		// A request either completed with a real answer or never got in;
		// none is cut off half-way with a broken response.
		if r.err == nil && r.code != 201 && r.code != 401 {
			t.Fatalf("in-flight request answered %d", r.code)
		}
	}
}

// runCmd runs the binary to completion: its stdout, stderr and exit code.
func runCmd(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	// A command that serves instead of exiting would otherwise hang the test.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

var commandNames = []string{"serve", "wait", "mint-credit-token", "secret", "fund", "sign-payment", "print-openapi", "bench", "help"}

// help lists every command, one line each, and exits; it never serves.
func TestHelpListsEveryCommandOnOneLine(t *testing.T) {
	for _, word := range []string{"help", "-h", "--help"} {
		t.Run(word, func(t *testing.T) {
			out, _, code := runCmd(t, t.TempDir(), []string{"ADDR=127.0.0.1:0"}, word)
			if code != 0 || strings.Contains(out, "listening on") {
				t.Fatalf("exit %d: %s", code, out)
			}
			for _, name := range commandNames {
				if n := len(regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(name)+` +\S.*$`).FindAllString(out, -1)); n != 1 {
					t.Errorf("%d lines for %s in:\n%s", n, name, out)
				}
			}
		})
	}
}

// An unknown word exits 2 with the list instead of starting a server.
func TestUnknownCommandExitsTwoWithTheList(t *testing.T) {
	for _, args := range [][]string{{"mint-token"}, {"--data-dir", t.TempDir(), "stray"}} {
		out, errOut, code := runCmd(t, t.TempDir(), []string{"ADDR=127.0.0.1:0"}, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "unknown command") || !strings.Contains(errOut, "  mint-credit-token ") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %s", args, code, out, errOut)
		}
	}
}

// The development commands never create a signing key or a chain where the
// server's data directory was expected: a directory that does not exist or
// that no server has written is refused, and left as it was; the message
// says what is wrong with the directory given and where it came from.
func TestDevelopmentCommandsRefuseADataDirWithoutServerDataAndSayWhy(t *testing.T) {
	fundArgs := []string{"fund", "--address", "0x0000000000000000000000000000000000000001", "--asset", "USDC", "--amount", "1"}
	for _, tc := range []struct {
		name    string
		missing bool // the directory does not exist
		viaFlag bool // --data-dir rather than DATA_DIR
		args    []string
		want    string // %s is the directory
	}{
		{"MintMissingDir", true, false, []string{"mint-credit-token", "--credits", "5"}, "DATA_DIR %s: no such directory, so no server data in %[1]s; start the server first or pass --data-dir"},
		{"MintEmptyDirFlag", false, true, []string{"mint-credit-token", "--credits", "5"}, "--data-dir %s: no server data there (no credit-token.key); pass the data directory the server's banner prints"},
		{"FundMissingDirFlag", true, true, fundArgs, "--data-dir %s: no such directory; pass the data directory the server's banner prints"},
		{"FundEmptyDir", false, false, fundArgs, "no server data in %s; start the server first or pass --data-dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.missing {
				dir = filepath.Join(dir, "data")
			}
			env, args := []string{"DATA_DIR=" + dir}, tc.args
			if tc.viaFlag {
				env, args = []string{"DATA_DIR=" + filepath.Join(t.TempDir(), "elsewhere")}, append(append([]string{}, args...), "--data-dir", dir)
			}
			out, errOut, code := runCmd(t, t.TempDir(), env, args...)
			want := fmt.Sprintf(tc.want, dir)
			if code != 1 || out != "" || !strings.Contains(errOut, want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("the refused command wrote %v", entries)
			}
		})
	}
}

// --data-dir names the server's directory over DATA_DIR, and the command
// says which signing key it used and the address that server actually
// listens on (not ADDR's default): the token it prints is one that server
// redeems there.
func TestMintUsesTheServersDataDirAndSaysWhereItListens(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, []string{"DATA_DIR=" + dir})
	tok, errOut, code := runCmd(t, t.TempDir(), []string{"DATA_DIR=" + filepath.Join(t.TempDir(), "other"), "ADDR="}, "mint-credit-token", "--data-dir", dir, "--credits", "7")
	if code != 0 || !strings.Contains(errOut, filepath.Join(dir, "credit-token.key")) || !strings.Contains(errOut, srv.base+"/v1/api-keys") || strings.Contains(errOut, "8080") {
		t.Fatalf("exit %d: %s (the server listens on %s)", code, errOut, srv.base)
	}
	if code, body := call(t, "POST", srv.base+"/v1/api-keys", map[string]string{"X-Service-Credit-Token": strings.TrimSpace(tok),
		"Idempotency-Key": "first-key-001", "Content-Type": "application/json"}, `{}`); code != 201 {
		t.Fatalf("redeem: %d %v", code, body)
	}
}

// The banner `make run` prints once listening names the data directory,
// the chain's RPC, the reference, the console, and a first-key command that works as
// printed (with `go run ./functions/local` standing for this binary).
func TestBannerGivesTheDataDirChainDocsConsoleAndAFirstKeyCommandThatWorks(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary(t))
	cmd.Env = append(os.Environ(), "ADDR=127.0.0.1:0", "DATA_DIR="+dir)
	stdout, _ := cmd.StdoutPipe()
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	lines := map[string]string{}
	var base string
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "listening on "); ok {
			base = rest
			continue
		}
		k, v, _ := strings.Cut(strings.TrimSpace(line), "  ")
		lines[k] = strings.TrimSpace(v)
		if k == "first key" {
			break
		}
	}
	if base == "" || lines["data directory"] != dir || lines["API reference"] != base+"/docs" || !strings.HasPrefix(lines["chain RPC"], "http://127.0.0.1:") {
		t.Fatalf("banner %v after %q\n%s", lines, base, logs.String())
	}
	if endpoint, _ := os.ReadFile(filepath.Join(dir, "chain", "endpoint")); strings.TrimSpace(string(endpoint)) != lines["chain RPC"] {
		t.Fatalf("chain RPC %q, the chain's endpoint %q", lines["chain RPC"], endpoint)
	}
	for _, page := range []string{"API reference", "console"} {
		if !strings.HasPrefix(lines[page], base+"/") {
			t.Fatalf("%s: %q", page, lines[page])
		}
		if code, _ := call(t, "GET", lines[page], nil, ""); code != 200 {
			t.Fatalf("%s: %d", page, code)
		}
	}
	first := lines["first key"]
	if !strings.Contains(first, "go run ./functions/local mint-credit-token --data-dir "+dir+" ") {
		t.Fatalf("first key command %q", first)
	}
	work := t.TempDir()
	sh := exec.Command("sh", "-c", strings.ReplaceAll(first, "go run ./functions/local", binary(t)))
	sh.Dir = work
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var key struct {
		Secret string `json:"secret"`
	}
	raw, _ := os.ReadFile(filepath.Join(work, "key.json"))
	if json.Unmarshal(raw, &key) != nil || !strings.HasPrefix(key.Secret, "psk_") {
		t.Fatalf("key.json %s", raw)
	}
}

// A taken port ends the server with status 1 and a message that names the
// address and the way out, before it starts anything that only a signal
// would stop (it used to wait for its workers forever).
func TestATakenPortEndsTheServerWithTheAddressAndTheWayOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	out, errOut, code := runCmd(t, t.TempDir(), []string{"ADDR=" + addr, "DATA_DIR=" + t.TempDir()})
	if code != 1 || strings.Contains(out, "listening on") {
		t.Fatalf("exit %d, stdout %q; want 1 without serving", code, out)
	}
	for _, want := range []string{"cannot listen on " + addr, "address already in use", "ADDR="} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
}

// The fault hooks of the soak harness exist only in a soakfaults build: the
// binary built without the tag answers the slicing route like any unknown
// path, never slices, and ignores the fault variables.
func TestTheNormalBinaryHasNoFaultInjection(t *testing.T) {
	srv := start(t, []string{"DATA_DIR=" + t.TempDir(), "SOAK_FAULT=drop-audit", "SOAK_CRASH_AFTER=1"})
	defer srv.stop(t)
	if code, _ := call(t, "POST", srv.base+"/_soak/slice?key=key_x&n=4", nil, ""); code != 404 {
		t.Fatalf("POST /_soak/slice answered %d in a build without soakfaults; want 404", code)
	}
	if code, _ := call(t, "GET", srv.base+"/health", nil, ""); code != 200 {
		t.Fatalf("health after a write: %d", code)
	}
}

// spendAndSeeItInUsage makes one charged call (0.01 credits) and waits for
// /usage to report spent credits in all, exactly: the rollup runs in the
// process on both backends (embedded: the recorder's own pass; aws: the
// table's stream, which no event source mapping reads here). After a
// restart the stream is read again from its start, so the second call's
// total also proves the first is not counted twice.
func spendAndSeeItInUsage(t *testing.T, srv *server, secret, idem string, spent int64) {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + secret}
	code, out := call(t, "POST", srv.base+"/v1/services/cloud-superbrain/invoke", map[string]string{
		"Authorization": "Bearer " + secret, "Idempotency-Key": idem, "Content-Type": "application/json"},
		`{"operationId":"memory.write","input":{"text":"the deploy key rotates every 90 days"}}`)
	if code != 200 || out["chargedCredits"] != 0.01 {
		t.Fatalf("invoke: %d %v", code, out)
	}
	if code, bal := call(t, "GET", srv.base+"/v1/credits/balance", auth, ""); code != 200 || micro(bal["balance"]) != 42_000_000-spent {
		t.Fatalf("balance after the call: %d %v", code, bal)
	}
	var last map[string]any
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		code, last = call(t, "GET", srv.base+"/v1/usage", auth, "")
		if code != 200 {
			t.Fatalf("usage: %d %v", code, last)
		}
		switch got := chargedMicro(last); {
		case got == spent:
			return
		case got > spent:
			t.Fatalf("usage reports %d micro-credits charged, the balance lost %d: %v", got, spent, last)
		}
	}
	t.Fatalf("usage never reported the %d micro-credits spent: %v\n%s", spent, last, srv.logs)
}

func micro(v any) int64 {
	f, _ := v.(float64)
	return int64(math.Round(f * 1e6))
}

// chargedMicro sums chargedCredits over a /usage page.
func chargedMicro(page map[string]any) int64 {
	var sum int64
	buckets, _ := page["data"].([]any)
	for _, b := range buckets {
		results, _ := b.(map[string]any)["results"].([]any)
		for _, r := range results {
			sum += micro(r.(map[string]any)["chargedCredits"])
		}
	}
	return sum
}

// The local process writes the audit store's blocks with klauspost's
// deflater, which only it links: the configuration every command gets
// carries it.
func TestTheLocalProcessDeflatesAuditBlocksWithTheFastDeflater(t *testing.T) {
	cfg, err := localConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BlockDeflater == nil {
		t.Fatal("no block deflater injected: compress/flate's would deflate the blocks")
	}
	w, err := cfg.BlockDeflater(flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(*kflate.Writer); !ok {
		t.Errorf("block deflater is a %T, want klauspost's *flate.Writer", w)
	}
}

// The listener never ends a request before its deadline: its read and
// write timeouts outlast REQUEST_TIMEOUT, whatever it is set to.
func TestTheListenersTimeoutsOutlastTheRequestDeadline(t *testing.T) {
	for _, d := range []time.Duration{0, 4 * time.Second, 30 * time.Second, 2 * time.Minute} {
		srv := httpServer(http.NotFoundHandler(), d)
		deadline := max(d, 30*time.Second)
		if srv.ReadTimeout <= deadline || srv.WriteTimeout <= deadline {
			t.Errorf("REQUEST_TIMEOUT %v: read timeout %v, write timeout %v", d, srv.ReadTimeout, srv.WriteTimeout)
		}
	}
}
