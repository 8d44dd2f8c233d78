package lambdarie_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"platformapi/shared/harness/lambdarie"
)

// The test binary doubles as the function under test: started with
// LAMBDARIE_FUNCTION set, it runs aws-lambda-go's runtime loop against the
// emulator, as our functions do.
func TestMain(m *testing.M) {
	switch os.Getenv("LAMBDARIE_FUNCTION") {
	case "":
		os.Exit(m.Run())
	case "exit":
		os.Exit(3)
	default:
		lambda.Start(handle)
	}
}

type event struct {
	Action string `json:"action"`
}

type echo struct {
	RequestID, FunctionARN, FunctionName, Memory, Region, Home, Extra string
}

func handle(ctx context.Context, ev event) (any, error) {
	switch ev.Action {
	case "fail":
		return nil, errors.New("boom")
	case "sleep":
		time.Sleep(5 * time.Second)
	case "slow":
		time.Sleep(300 * time.Millisecond)
	}
	lc, _ := lambdacontext.FromContext(ctx)
	return echo{
		RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn,
		FunctionName: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), Memory: os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"),
		Region: os.Getenv("AWS_REGION"), Home: os.Getenv("HOME"), Extra: os.Getenv("EXTRA"),
	}, nil
}

func start(t *testing.T, mode string, timeout time.Duration) *lambdarie.Function {
	t.Helper()
	rie, err := lambdarie.Binary("../../..")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fn, err := lambdarie.Start(ctx, lambdarie.Config{
		RIE: rie, Path: exe, Name: "probe", MemoryMB: 256, Region: "eu-west-1", Timeout: timeout,
		Env: []string{"LAMBDARIE_FUNCTION=" + mode, "EXTRA=given"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fn.Stop(); err != nil {
			t.Error(err)
		}
	})
	return fn
}

func invoke(t *testing.T, fn *lambdarie.Function, action string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fn.Invoke(ctx, []byte(`{"action":"`+action+`"}`))
}

// The function sees Lambda's variables and the caller's, and nothing of the
// process that started the emulator (HOME here), since the emulator hands
// its whole environment on.
func TestFunctionGetsLambdaEnvironmentAndNothingInherited(t *testing.T) {
	t.Setenv("HOME", "/home/tester")
	out, err := invoke(t, start(t, "echo", 0), "echo")
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if e.FunctionName != "probe" || e.Memory != "256" || e.Region != "eu-west-1" || e.Extra != "given" || e.RequestID == "" {
		t.Errorf("environment %+v, want probe, 256 MB, eu-west-1, the caller's EXTRA and a request id", e)
	}
	if e.Home != "" {
		t.Errorf("HOME %q leaked from the caller's environment", e.Home)
	}
}

// A function's error document comes back as a *FunctionError, although the
// emulator answers it with 200 and drops the header that marks it, and the
// function stays warm for the next event.
func TestFunctionErrorIsAFunctionErrorAndTheFunctionStaysWarm(t *testing.T) {
	fn := start(t, "echo", 0)
	_, err := invoke(t, fn, "fail")
	var fe *lambdarie.FunctionError
	if !errors.As(err, &fe) || fe.Phase != "invoke" || fe.Message != "boom" {
		t.Fatalf("error %v, want an invoke FunctionError boom", err)
	}
	if _, err := invoke(t, fn, "echo"); err != nil {
		t.Fatalf("after a function error: %v", err)
	}
	if strings.Count(fn.Logs(), "Init Duration") != 1 {
		t.Errorf("the function was initialised more than once:\n%s", fn.Logs())
	}
}

// A bootstrap that exits during init fails the first invocation with an
// init-phase error.
func TestExitDuringInitIsAnInitError(t *testing.T) {
	_, err := invoke(t, start(t, "exit", 0), "echo")
	var fe *lambdarie.FunctionError
	if !errors.As(err, &fe) || fe.Phase != "init" {
		t.Fatalf("error %v, want an init FunctionError", err)
	}
}

// The emulator refuses an invocation while one is in flight; Invoke queues
// it instead, so concurrent callers all get answers.
func TestConcurrentInvocationsQueueForTheOneEnvironment(t *testing.T) {
	fn := start(t, "echo", 0)
	if _, err := invoke(t, fn, "echo"); err != nil { // init out of the way
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			_, err := invoke(t, fn, "slow")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// An invocation that overruns the function's timeout is an error, not a
// payload.
func TestTimedOutInvocationIsAnError(t *testing.T) {
	out, err := invoke(t, start(t, "echo", time.Second), "sleep")
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("payload %q, error %v; want a timeout", out, err)
	}
}

// Init's duration is the emulator's INIT REPORT, known after the first
// invocation.
func TestInitDurationIsKnownAfterTheFirstInvocation(t *testing.T) {
	fn := start(t, "echo", 0)
	if _, ok := fn.InitDuration(); ok {
		t.Fatal("init duration before the first invocation")
	}
	if _, err := invoke(t, fn, "echo"); err != nil {
		t.Fatal(err)
	}
	if d, ok := reported(fn.InitDuration); !ok || d <= 0 {
		t.Fatalf("init duration %s, %v", d, ok)
	}
}

// reported waits for a figure the emulator reports on its log: the log
// comes through a pipe, which a busy machine may deliver well after the
// response.
func reported(figure func() (time.Duration, bool)) (time.Duration, bool) {
	d, ok := figure()
	for wait := time.Now().Add(30 * time.Second); !ok && time.Now().Before(wait); d, ok = figure() {
		time.Sleep(5 * time.Millisecond)
	}
	return d, ok
}

// The first invocation's duration is its REPORT line's Duration, init it
// waited for included: a first event that sleeps 300 ms reports at least
// that and at least the init, and nothing is reported before an invocation.
func TestFirstInvokeDurationIsTheFirstReportsDuration(t *testing.T) {
	fn := start(t, "echo", 0)
	if _, ok := fn.FirstInvokeDuration(); ok {
		t.Fatal("first invoke duration before any invocation")
	}
	if _, err := invoke(t, fn, "slow"); err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, fn, "echo"); err != nil {
		t.Fatal(err)
	}
	d, ok := reported(fn.FirstInvokeDuration)
	init, _ := fn.InitDuration()
	if !ok || d < 300*time.Millisecond || d < init || d > 5*time.Second {
		t.Fatalf("first invoke duration %s, %v (init %s); want the slow first event's, at least 300ms and the init", d, ok, init)
	}
}

// After Stop the function no longer answers.
func TestStoppedFunctionNoLongerAnswers(t *testing.T) {
	fn := start(t, "echo", 0)
	if err := fn.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := invoke(t, fn, "echo"); err == nil {
		t.Fatal("a stopped function answered")
	}
}

// The Makefile builds the emulator the package pins, into the path Binary
// uses, so `make stack` and the tests run the same one.
func TestMakefilePinsTheSameEmulator(t *testing.T) {
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RIE_VERSION := " + lambdarie.Version + "\n", "RIE := .cache/tools/aws-lambda-rie@$(RIE_VERSION)/aws-lambda-rie\n", lambdarie.Module + "@$(RIE_VERSION)"} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("the Makefile lacks %q", want)
		}
	}
}

// OnLine sees the function's log lines as they are written, without the
// emulator's own diagnostics: the feed of a log subscription.
func TestOnLineSeesTheFunctionsLogLines(t *testing.T) {
	rie, err := lambdarie.Binary("../../..")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	fn, err := lambdarie.Start(context.Background(), lambdarie.Config{
		RIE: rie, Path: exe, Name: "probe", Env: []string{"LAMBDARIE_FUNCTION=echo"},
		OnLine: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fn.Stop()
	if _, err := invoke(t, fn, "echo"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(lines, "\n")
	if !strings.Contains(got, "START RequestId: ") || strings.Contains(got, "(rapid)") {
		t.Fatalf("lines %q, want the platform's START and none of the emulator's diagnostics", lines)
	}
}

// A caller that stops waiting does not stop the invocation; the next one
// waits for it instead of being refused by the busy emulator.
func TestAnAbandonedInvocationFinishesBeforeTheNext(t *testing.T) {
	fn := start(t, "echo", 0)
	if _, err := invoke(t, fn, "echo"); err != nil { // init out of the way
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := fn.Invoke(ctx, []byte(`{"action":"sleep"}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the caller's deadline", err)
	}
	if _, err := invoke(t, fn, "echo"); err != nil {
		t.Fatalf("the invocation after an abandoned one: %v", err)
	}
}
