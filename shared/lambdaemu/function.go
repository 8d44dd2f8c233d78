// Package lambdaemu is a small Go emulator of the Lambda Runtime API that
// runs a real function binary as a child process. The tests and the local
// stack run functions under AWS's own emulator (shared/lambdarie); this one
// stays for what that one cannot do: start the bootstrap at once and time
// exec to its first poll in process, for many starts in a row, which the
// cold-start benchmark (shared/bench) needs. AWS's emulator inits only at
// the first invocation and reports init in its own log. It serves the
// runtime endpoints a custom runtime uses (next, response, error,
// init/error) on loopback only, and starts the binary with the environment
// Lambda gives it and nothing inherited from the calling process. It must
// never listen beyond 127.0.0.1.
package lambdaemu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Config describes one function and its environment.
type Config struct {
	// Path is the function binary (a bootstrap built for the host).
	Path string
	// Name is AWS_LAMBDA_FUNCTION_NAME; the binary's file name by default.
	Name string
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE; 128 by default.
	MemoryMB int
	// Region is AWS_REGION and AWS_DEFAULT_REGION; us-east-1 by default.
	Region string
	// Timeout is each invocation's deadline; 30 s (API Gateway's) by default.
	Timeout time.Duration
	// Env is added to the function's environment as KEY=VALUE pairs and
	// wins over the defaults. Pass everything the function needs
	// (DATA_DIR, or BACKEND=aws with AWS_ENDPOINT_URL and credentials).
	Env []string
}

// initTimeout is Lambda's limit on an on-demand function's init phase; a
// cold start slower than this would fail in AWS, so it fails here too.
// stopGrace is how long Stop waits after SIGTERM before it kills.
const (
	initTimeout = 10 * time.Second
	stopGrace   = 3 * time.Second
)

// Function is a running function process and its Runtime API.
type Function struct {
	cfg      Config
	api      *runtimeAPI
	srv      *http.Server
	cmd      *exec.Cmd
	logs     *logBuffer
	started  time.Time
	exited   chan struct{}
	exitErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start runs the binary and waits until its init phase ends: the first poll
// for an event (ready), an init error it reports, its exit, the init
// timeout, or ctx's end.
// Only a ready function is returned; otherwise the process is stopped and
// the error is a *StartError (wrapping a *FunctionError when the function
// reported its init error).
func Start(ctx context.Context, cfg Config) (*Function, error) {
	cfg = withDefaults(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("lambdaemu: listen: %w", err)
	}
	f := &Function{cfg: cfg, api: newRuntimeAPI(cfg), logs: &logBuffer{}, exited: make(chan struct{})}
	f.srv = &http.Server{Handler: f.api.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()

	f.cmd = exec.Command(cfg.Path)
	f.cmd.Env = f.environment(ln.Addr().String())
	f.cmd.Stdout, f.cmd.Stderr = f.logs, f.logs
	f.started = time.Now()
	if err := f.cmd.Start(); err != nil {
		_ = f.srv.Close()
		return nil, fmt.Errorf("lambdaemu: start %s: %w", cfg.Path, err)
	}
	go func() {
		f.exitErr = f.cmd.Wait()
		close(f.exited)
	}()

	initTimer := time.NewTimer(initTimeout)
	defer initTimer.Stop()
	select {
	case <-f.api.ready:
		return f, nil
	case err := <-f.api.initFailed:
		return nil, f.failStart(err)
	case <-f.exited:
		select {
		case err := <-f.api.initFailed: // reported, then exited: the report says why
			return nil, f.failStart(err)
		default:
			return nil, f.failStart(fmt.Errorf("lambdaemu: %s exited during init: %v", cfg.Name, f.exitErr))
		}
	case <-initTimer.C:
		return nil, f.failStart(fmt.Errorf("lambdaemu: %s did not finish init within %s", cfg.Name, initTimeout))
	case <-ctx.Done():
		return nil, f.failStart(fmt.Errorf("lambdaemu: %s did not finish init: %w", cfg.Name, ctx.Err()))
	}
}

// StartError is a failed init, with what the function wrote meanwhile.
type StartError struct {
	Err  error // a *FunctionError when the function reported it
	Logs string
}

func (e *StartError) Error() string { return e.Err.Error() + "; output:\n" + e.Logs }
func (e *StartError) Unwrap() error { return e.Err }

func (f *Function) failStart(err error) error {
	_ = f.Stop()
	return &StartError{Err: err, Logs: f.Logs()}
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
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	return c
}

// environment is what Lambda sets for a custom runtime, then the caller's.
func (f *Function) environment(api string) []string {
	env := []string{
		"AWS_LAMBDA_RUNTIME_API=" + api,
		"AWS_LAMBDA_FUNCTION_NAME=" + f.cfg.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(f.cfg.MemoryMB),
		"AWS_REGION=" + f.cfg.Region,
		"AWS_DEFAULT_REGION=" + f.cfg.Region,
		"TZ=:UTC",
	}
	return append(env, f.cfg.Env...)
}

// ColdStart is the time from exec to the function's first poll for an
// event: Lambda's init duration for this binary on this machine.
func (f *Function) ColdStart() time.Duration { return f.api.firstPoll.Sub(f.started) }

// Logs returns what the function wrote to stdout and stderr so far, which
// Lambda would send to CloudWatch.
func (f *Function) Logs() string { return f.logs.String() }

// Invoke sends one event and returns the function's response payload. A
// function error is a *FunctionError; a timeout or a crash is a plain error.
// As on Lambda, a function that overruns its timeout is stopped, so every
// later Invoke fails. If ctx ends first, Invoke stops waiting but the
// function still finishes the event, as a Lambda invocation would.
func (f *Function) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	inv := f.api.newInvocation(event)
	select {
	case f.api.pending <- inv:
	case <-f.exited:
		return nil, f.crashed()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	timer := time.NewTimer(f.cfg.Timeout)
	defer timer.Stop()
	select {
	case res := <-inv.done:
		return res.payload, res.err
	case <-timer.C:
		_ = f.Stop()
		return nil, fmt.Errorf("lambdaemu: %s: task timed out after %s", f.cfg.Name, f.cfg.Timeout)
	case <-f.exited:
		return nil, f.crashed()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *Function) crashed() error {
	return fmt.Errorf("lambdaemu: %s exited (%v); output:\n%s", f.cfg.Name, f.exitErr, f.Logs())
}

// Stop ends the process as Lambda does at shutdown, SIGTERM and then SIGKILL
// after a grace period, and closes the Runtime API. It is safe to call
// twice; it reports an error only if the process had to be killed.
func (f *Function) Stop() error {
	f.stopOnce.Do(func() {
		select {
		case <-f.exited:
		default:
			_ = f.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-f.exited:
			case <-time.After(stopGrace):
				_ = f.cmd.Process.Kill()
				<-f.exited
				f.stopErr = errors.New("lambdaemu: " + f.cfg.Name + " ignored SIGTERM and was killed")
			}
		}
		close(f.api.stopping)
		_ = f.srv.Close()
	})
	return f.stopErr
}
