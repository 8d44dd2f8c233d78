package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wait prints the URL of the server of its data directory, the address
// that server actually listens on, even when another process answers at
// ADDR.
func TestWaitPrintsTheURLOfTheServerOfItsDataDir(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer other.Close()
	dir := t.TempDir()
	srv := start(t, []string{"DATA_DIR=" + dir})
	out, errOut, code := runCmd(t, t.TempDir(), []string{"DATA_DIR=" + dir, "ADDR=" + strings.TrimPrefix(other.URL, "http://")}, "wait", "--timeout", "30s")
	if code != 0 || out != srv.base+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %s", code, out, errOut, srv.base)
	}
}

// Another process answering /health where the server of the data directory
// should listen is named at once, with the way out, instead of being
// taken for the server (the next commands would then fail with 401s).
func TestWaitFailsAtOnceWhenAnotherProcessHoldsThePort(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer other.Close()
	dir := t.TempDir()
	began := time.Now()
	out, errOut, code := runCmd(t, t.TempDir(), []string{"DATA_DIR=" + dir, "ADDR=" + strings.TrimPrefix(other.URL, "http://")}, "wait", "--timeout", "1m")
	if code != 1 || out != "" || time.Since(began) > 30*time.Second {
		t.Fatalf("exit %d after %s, stdout %q, stderr %q", code, time.Since(began), out, errOut)
	}
	for _, want := range []string{other.URL + " answers /health, but it is not the server of the data directory " + dir, "another process holds the port", "ADDR="} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
}

// With nothing answering, wait gives up after its timeout and says where
// the cause is.
func TestWaitGivesUpWithTheCauseWhenNoServerAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port nothing listens on
	dir := t.TempDir()
	out, errOut, code := runCmd(t, t.TempDir(), []string{"DATA_DIR=" + dir, "ADDR=" + addr}, "wait", "--timeout", "1s")
	if code != 1 || out != "" || !strings.Contains(errOut, "no server of "+dir+" answered within 1s") || !strings.Contains(errOut, "nothing answers at http://"+addr) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// secret prints the secret of a created key alone, and otherwise fails
// with what the file holds instead: the problem's status, code and detail.
func TestSecretPrintsTheKeysSecretOrWhatTheAnswerHeldInstead(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int
		out, err   string
	}{
		{"Key", `{"id":"key_1","label":"root","status":"active","depth":1,"secret":"psk_abc"}`, 0, "psk_abc\n", ""},
		{"Problem", `{"status":401,"code":"invalid_credit_token","title":"Invalid credit token","detail":"The credit token is forged, malformed or expired."}`, 1, "",
			"key.json holds no key but a problem: 401 invalid_credit_token: The credit token is forged, malformed or expired."},
		{"NoSecret", `{"id":"key_1","label":"root","status":"active"}`, 1, "", "key.json holds no secret"},
		{"NotJSON", ``, 1, "", "key.json is not a JSON answer of POST /v1/api-keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "key.json"), []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCmd(t, dir, nil, "secret")
			if code != tc.code || out != tc.out || !strings.Contains(errOut, tc.err) {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
	if _, errOut, code := runCmd(t, t.TempDir(), nil, "secret"); code != 1 || !strings.Contains(errOut, "no key to read") {
		t.Fatalf("without key.json: exit %d, %s", code, errOut)
	}
}

// A browser's request for /favicon.ico is answered, with no content,
// rather than with a 404.
func TestTheServerAnswersTheFaviconWithNoContent(t *testing.T) {
	srv := start(t, []string{"DATA_DIR=" + t.TempDir()})
	res, err := http.Get(srv.base + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("GET /favicon.ico: %d", res.StatusCode)
	}
}

// Ctrl-C (SIGINT) ends the server after a clean shutdown with status 0,
// and its record of where it listened goes with it.
func TestAnInterruptEndsTheServerWithStatusZero(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, []string{"DATA_DIR=" + dir})
	if _, err := os.Stat(filepath.Join(dir, recordFile)); err != nil {
		t.Fatalf("no record while serving: %v", err)
	}
	_ = srv.cmd.Process.Signal(os.Interrupt)
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v\n%s", err, srv.logs)
	}
	if _, err := os.Stat(filepath.Join(dir, recordFile)); !os.IsNotExist(err) {
		t.Fatalf("the record outlived the server: %v", err)
	}
}

// Ctrl-C on `make run` ends the server with status 0, so make reports no
// failure ("make: *** ... Error 1"): make runs the built server itself (`go run` exits 1 on an interrupt whatever
// its program does). GO stands in for the toolchain: its build copies this
// test's binary.
func TestCtrlCOnMakeRunEndsWithStatusZero(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	tmp := t.TempDir()
	fakeGo := filepath.Join(tmp, "go")
	script := "#!/bin/sh\n[ \"$1\" = build ] && [ \"$2\" = -o ] && exec cp " + binary(t) + " \"$3\"\necho \"unexpected: go $*\" >&2; exit 3\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", "../..", "run", "GO="+fakeGo, "LOCAL_BIN="+filepath.Join(tmp, "local"),
		"ADDR=127.0.0.1:0", "DATA_DIR="+filepath.Join(tmp, "data"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "listening on ") {
				listening <- true
			}
		}
		close(listening)
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatalf("make run did not serve: %s", stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("make run did not serve: %s", stderr.String())
	}
	// The terminal's Ctrl-C: SIGINT to the whole foreground group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var errLines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if !strings.HasPrefix(l, "{") && strings.TrimSpace(l) != "" {
			errLines = append(errLines, l)
		}
	}
	// make re-raises the SIGINT it got itself once its child is done, as
	// every program interrupted at a terminal does; what it must not do is
	// report its child as failed.
	var exit *exec.ExitError
	interrupted := errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT
	if (err != nil && !interrupted) || strings.Contains(stderr.String(), "make: ***") {
		t.Fatalf("make run after Ctrl-C: %v\n%s", err, strings.Join(errLines, "\n"))
	}
}

// The local server's access line: text with LOG_FORMAT=text; JSON into a
// pipe, without the CloudWatch metrics no CloudWatch reads there, unless
// LOG_EMF=true asks for them.
func TestTheLocalAccessLineIsTextWhenAskedAndJSONWithoutMetricsOtherwise(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     []string
		text    bool
		metrics bool
	}{
		{"text", []string{"LOG_FORMAT=text"}, true, false},
		{"pipe", nil, false, false},
		{"metrics asked", []string{"LOG_EMF=true"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, append([]string{"DATA_DIR=" + t.TempDir(), "LOG_FORMAT=", "LOG_EMF=", "AWS_LAMBDA_FUNCTION_NAME="}, tc.env...))
			if code, _ := call(t, "GET", srv.base+"/health", nil, ""); code != 200 {
				t.Fatalf("health: %d", code)
			}
			srv.stop(t)
			var line string
			for _, l := range strings.Split(srv.logs.String(), "\n") {
				if strings.Contains(l, "/health") {
					line = l
				}
			}
			switch {
			case line == "":
				t.Fatalf("no access line in\n%s", srv.logs)
			case tc.text && !strings.Contains(line, "INFO  request GET /health 200 "):
				t.Fatalf("not a text access line: %s", line)
			case !tc.text && !strings.HasPrefix(line, `{"time":`):
				t.Fatalf("not a JSON access line: %s", line)
			case strings.Contains(line, `"_aws"`) != tc.metrics:
				t.Fatalf("metrics %v, want %v: %s", !tc.metrics, tc.metrics, line)
			}
		})
	}
}
