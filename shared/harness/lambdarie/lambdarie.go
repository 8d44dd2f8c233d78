// Package lambdarie runs a real Lambda function binary under AWS's runtime
// interface emulator (aws-lambda-rie), the Runtime API that AWS's base
// images ship: the tests and the local stack run each bootstrap exactly as
// provided.al2023 does, instead of under an emulator written here.
//
// One emulator process runs one function. The emulator serves one
// invocation at a time (a second concurrent one is refused), so Invoke
// queues callers: a function here has a reserved concurrency of one.
// The emulator passes its whole environment to the function, so it is
// started with only what Lambda sets and the caller's variables; nothing is
// inherited from the calling process. It listens on loopback only.
package lambdarie

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Module and Version pin the emulator; the Makefile's RIE_VERSION must
// agree (a test holds them together).
const (
	Module  = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	Version = "v0.0.0-20261030222936-bef5c4ba774d"
)

// Binary returns the pinned emulator under root's .cache, building it from
// the module proxy on first use as the Makefile does. AWS_LAMBDA_RIE, when
// set, names a binary to use instead.
func Binary(root string) (string, error) {
	if p := os.Getenv("AWS_LAMBDA_RIE"); p != "" {
		return p, nil
	}
	dir, err := filepath.Abs(filepath.Join(root, ".cache", "tools", "aws-lambda-rie@"+Version))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "aws-lambda-rie")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.Command("go", "install", Module+"@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("lambdarie: go install %s@%s: %v\n%s", Module, Version, err, out)
	}
	return bin, nil
}

// Config describes one function and its environment.
type Config struct {
	// RIE is the emulator binary (see Binary).
	RIE string
	// Path is the function's bootstrap, built for the host.
	Path string
	// Name is AWS_LAMBDA_FUNCTION_NAME; the binary's file name by default.
	Name string
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE; 128 by default.
	MemoryMB int
	// Region is AWS_REGION and AWS_DEFAULT_REGION; us-east-1 by default.
	Region string
	// Timeout is each invocation's deadline, in whole seconds as Lambda
	// sets it; 30 s (API Gateway's) by default.
	Timeout time.Duration
	// Env is added to the function's environment as KEY=VALUE pairs and
	// wins over the defaults.
	Env []string
	// OnLine, when set, is called with each complete line of the function's
	// log (what Logs holds) as it is written: the feed a log subscription
	// reads. It must not block.
	OnLine func(line string)
}

// FunctionError is an error the function reported: at init (Phase "init",
// the emulator answers 502) or for one event (Phase "invoke").
type FunctionError struct {
	Phase   string
	Type    string // errorType, such as Runtime.InitError
	Message string // errorMessage
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("lambdarie: function %s error %s: %s", e.Phase, e.Type, e.Message)
}

// Function is one emulator process serving one function.
type Function struct {
	cfg     Config
	url     string
	cmd     *exec.Cmd
	out     *output
	exited  chan struct{}
	exitErr error

	mu          sync.Mutex // held for an invocation: the emulator serves one at a time
	initialized bool       // an invocation got past init; guarded by mu

	stopOnce sync.Once
	stopErr  error
}

// stopGrace is how long Stop waits after SIGTERM before it kills.
// initMargin is added to the function's timeout for a first invocation,
// which runs init (Lambda's 10 s limit) before the event.
const (
	stopGrace  = 3 * time.Second
	initMargin = 15 * time.Second
)

// Start runs the emulator for cfg and waits until it accepts invocations.
// As on Lambda the function's init runs at the first invocation, whose
// error then is a *FunctionError of Phase "init".
//
// The emulator takes its two loopback addresses on the command line, so
// they are chosen free and then handed over: another process may take one
// in between. An emulator that could not bind exits at once; Start then
// tries again on new addresses.
func Start(ctx context.Context, cfg Config) (*Function, error) {
	cfg = withDefaults(cfg)
	for attempt := 1; ; attempt++ {
		f, err := start(ctx, cfg)
		if errors.Is(err, errAddrTaken) && attempt < startAttempts {
			continue
		}
		return f, err
	}
}

// startAttempts bounds Start's retries on an address taken meanwhile.
const startAttempts = 5

var errAddrTaken = errors.New("address taken")

func start(ctx context.Context, cfg Config) (*Function, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	runtimeAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	f := &Function{cfg: cfg, url: "http://" + addr + "/2015-03-31/functions/function/invocations", out: &output{onLine: cfg.OnLine}, exited: make(chan struct{})}
	f.cmd = exec.Command(cfg.RIE, "--runtime-interface-emulator-address", addr, "--runtime-api-address", runtimeAddr, cfg.Path)
	f.cmd.Dir = filepath.Dir(cfg.Path)
	f.cmd.Env = f.environment()
	f.cmd.Stdout, f.cmd.Stderr = f.out, f.out
	// Its own process group: Stop reaches the bootstrap too if the
	// emulator has to be killed.
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.cmd.Start(); err != nil {
		return nil, fmt.Errorf("lambdarie: start %s: %w", cfg.RIE, err)
	}
	go func() {
		f.exitErr = f.cmd.Wait()
		close(f.exited)
	}()
	// A connection proves only that something listens on an address: it
	// is the emulator's own once its process holds the listening socket
	// (the runtime API binds on a goroutine of its own, so the first
	// address alone says nothing of the second).
	for _, a := range []string{addr, runtimeAddr} {
		if err := f.awaitListening(ctx, a); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// awaitListening waits until the emulator's process listens on addr, the
// emulator exits, or ctx ends.
func (f *Function) awaitListening(ctx context.Context, addr string) error {
	for {
		if f.listensOn(addr) {
			return nil
		}
		select {
		case <-f.exited:
			err := fmt.Errorf("lambdarie: emulator for %s exited (%v):\n%s", f.cfg.Name, f.exitErr, f.out.String())
			if strings.Contains(f.out.String(), "address already in use") {
				err = fmt.Errorf("%w: %w", errAddrTaken, err)
			}
			return err
		case <-ctx.Done():
			_ = f.Stop()
			return fmt.Errorf("lambdarie: emulator for %s did not listen: %w", f.cfg.Name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// listensOn tells whether the emulator's process holds the socket that
// listens on addr, read from /proc where there is one; elsewhere a
// connection accepted on addr has to do.
func (f *Function) listensOn(addr string) bool {
	inodes, err := listeningInodes(addr)
	if err != nil {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", f.cmd.Process.Pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && inodes[target] {
			return true
		}
	}
	return false
}

// listeningInodes is the set of "socket:[inode]" links of the IPv4 sockets
// in LISTEN state on addr, from /proc/net/tcp.
func listeningInodes(addr string) (map[string]bool, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	const listen = "0A"
	local := fmt.Sprintf(":%04X", p)
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(table), "\n")[1:] {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(line)
		if len(fields) > 9 && strings.HasSuffix(fields[1], local) && fields[3] == listen {
			inodes["socket:["+fields[9]+"]"] = true
		}
	}
	return inodes, nil
}

func withDefaults(c Config) Config {
	if c.Name == "" {
		c.Name = filepath.Base(c.Path)
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = 128
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.Timeout < time.Second {
		c.Timeout = 30 * time.Second
	}
	return c
}

// environment is what Lambda sets for a provided.al2023 function, then the
// caller's. AWS_LAMBDA_FUNCTION_TIMEOUT is the emulator's own setting.
func (f *Function) environment() []string {
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"AWS_LAMBDA_FUNCTION_NAME=" + f.cfg.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(f.cfg.MemoryMB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(int(f.cfg.Timeout/time.Second)),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + f.cfg.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME=$LATEST",
		"AWS_REGION=" + f.cfg.Region,
		"AWS_DEFAULT_REGION=" + f.cfg.Region,
		"LOG_LEVEL=info",
	}
	return append(env, f.cfg.Env...)
}

// Name is the function's name.
func (f *Function) Name() string { return f.cfg.Name }

// Invoke sends one event and returns the function's response payload. A
// function error is a *FunctionError; a timeout or a crash is a plain error.
// If ctx ends first Invoke stops waiting, but the function still finishes
// the event, as a Lambda invocation would, and the next invocation waits
// for it: the emulator refuses one while another is in flight.
func (f *Function) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	type answer struct {
		payload []byte
		err     error
	}
	done := make(chan answer, 1)
	go func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if err := ctx.Err(); err != nil { // given up while queued: never sent
			done <- answer{err: err}
			return
		}
		payload, err := f.invoke(event)
		done <- answer{payload, err}
	}()
	select {
	case a := <-done:
		return a.payload, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// invoke runs one invocation to its end; f.mu is held. The emulator ends
// an overrunning one at the function's timeout, so the request needs no
// deadline of its own beyond a margin for a hung emulator.
func (f *Function) invoke(event []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.Timeout+initMargin)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(event))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		select {
		case <-f.exited:
			return nil, fmt.Errorf("lambdarie: emulator for %s exited (%v):\n%s", f.cfg.Name, f.exitErr, f.Logs())
		default:
			return nil, fmt.Errorf("lambdarie: invoke %s: %w", f.cfg.Name, err)
		}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("lambdarie: invoke %s: %w", f.cfg.Name, err)
	}
	phase := "invoke"
	if !f.initialized {
		phase = "init"
	}
	switch {
	case resp.StatusCode == http.StatusBadGateway:
		return nil, functionError(phase, body)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("lambdarie: invoke %s: emulator answered %s: %s", f.cfg.Name, resp.Status, body)
	case bytes.HasPrefix(body, []byte("Task timed out after")):
		f.initialized = true
		return nil, fmt.Errorf("lambdarie: %s: %s", f.cfg.Name, body)
	}
	f.initialized = true
	// The emulator drops the X-Amz-Function-Error header: a function error
	// is told by its body, the error document the runtime posted.
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) == nil && doc["errorType"] != nil && doc["errorMessage"] != nil {
		return nil, functionError("invoke", body)
	}
	return body, nil
}

func functionError(phase string, body []byte) error {
	var doc struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}
	if json.Unmarshal(body, &doc) != nil {
		doc.ErrorMessage = string(body)
	}
	return &FunctionError{Phase: phase, Type: doc.ErrorType, Message: doc.ErrorMessage}
}

// initReport is the emulator's log of a finished init phase. Its REPORT
// line's "Init Duration" is not it: the emulator starts init
// asynchronously, so that figure is the time to start it, not to finish it.
var initReport = regexp.MustCompile(`\(rapid\) INIT REPORT\(durationMs: ([0-9.]+)\)`)

// InitDuration is the function's first init phase as the emulator timed
// it (exec to the runtime's first poll); false before the first invocation.
func (f *Function) InitDuration() (time.Duration, bool) {
	return reportedDuration(initReport, f.out.String())
}

// invokeReport is the platform's REPORT line of an invocation, written
// just after the response is returned.
var invokeReport = regexp.MustCompile(`REPORT RequestId: \S+\s+(?:Init Duration: [0-9.]+ ms\s+)?Duration: ([0-9.]+) ms`)

// FirstInvokeDuration is the first invocation's REPORT Duration: from the
// event's arrival to the function's response. The emulator starts init
// when the first event arrives, so this first figure includes the init it
// waited for (InitDuration): it is the cold request's whole time. False
// until the REPORT line is written, which is just after Invoke returns.
func (f *Function) FirstInvokeDuration() (time.Duration, bool) {
	return reportedDuration(invokeReport, f.out.String())
}

// reportedDuration is the milliseconds the first match of report in log
// captures; false when the log holds no such line yet.
func reportedDuration(report *regexp.Regexp, log string) (time.Duration, bool) {
	m := report.FindStringSubmatch(log)
	if m == nil {
		return 0, false
	}
	ms, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// Logs returns what Lambda would send to CloudWatch: the function's output
// and the platform's START, END and REPORT lines, without the emulator's
// own diagnostics.
func (f *Function) Logs() string { return f.out.function() }

// EmulatorLogs returns everything the emulator process wrote.
func (f *Function) EmulatorLogs() string { return f.out.String() }

// Stop ends the emulator, which shuts the function down (SIGTERM, then
// SIGKILL to the process group after a grace period). It is safe to call
// twice; it reports an error only if something had to be killed.
func (f *Function) Stop() error {
	f.stopOnce.Do(func() {
		select {
		case <-f.exited:
			return
		default:
		}
		_ = f.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-f.exited:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
			<-f.exited
			f.stopErr = errors.New("lambdarie: " + f.cfg.Name + " ignored SIGTERM and was killed")
		}
	})
	return f.stopErr
}

// freeAddr picks a loopback address nobody listens on at the moment; a
// variable so a test can hand out one that is taken.
var freeAddr = func() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("lambdarie: listen: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// maxOutput bounds the captured output so a chatty function cannot exhaust
// memory; readers look at the start, where init is.
const maxOutput = 4 << 20

// output collects the emulator's stdout and stderr, written concurrently.
type output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	onLine  func(string)
	partial []byte // the unfinished last line, for onLine
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if room := maxOutput - o.buf.Len(); room > 0 {
		o.buf.Write(p[:min(len(p), room)])
	}
	if o.onLine != nil {
		o.partial = append(o.partial, p...)
		for {
			i := bytes.IndexByte(o.partial, '\n')
			if i < 0 {
				break
			}
			if line := string(o.partial[:i]); !emulatorLine.MatchString(line) {
				o.onLine(line)
			}
			o.partial = o.partial[i+1:]
		}
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// emulatorLine is a diagnostic of the emulator itself, such as
// "28 Nov 2026 23:29:12,117 [INFO] (rapid) exec ...".
var emulatorLine = regexp.MustCompile(`^\d{2} \w{3} \d{4} [\d:,]+ \[\w+\] \(rapid\) `)

func (o *output) function() string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(o.String()))
	sc.Buffer(make([]byte, 0, 64<<10), maxOutput)
	for sc.Scan() {
		if !emulatorLine.MatchString(sc.Text()) {
			b.WriteString(sc.Text())
			b.WriteByte('\n')
		}
	}
	return b.String()
}
