package lambdaemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"platformapi/shared/lambdaemu"
)

// The test binary doubles as the function under test: started with
// LAMBDAEMU_FUNCTION set, it runs a real aws-lambda-go runtime loop, so the
// emulator is checked against the client library our functions use.
func TestMain(m *testing.M) {
	switch os.Getenv("LAMBDAEMU_FUNCTION") {
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
	RequestID, FunctionARN, FunctionName, Memory, Region, Home string
	Deadline                                                   time.Time
}

func handle(ctx context.Context, ev event) (any, error) {
	switch ev.Action {
	case "fail":
		return nil, errors.New("boom")
	case "sleep":
		time.Sleep(10 * time.Second)
	case "big":
		return strings.Repeat("x", 7<<20), nil
	}
	lc, _ := lambdacontext.FromContext(ctx)
	deadline, _ := ctx.Deadline()
	return echo{
		RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn, Deadline: deadline,
		FunctionName: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), Memory: os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"),
		Region: os.Getenv("AWS_REGION"), Home: os.Getenv("HOME"),
	}, nil
}

func start(t *testing.T, mode string, timeout time.Duration) *lambdaemu.Function {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fn, err := lambdaemu.Start(ctx, lambdaemu.Config{
		Path: exe, Name: "probe", MemoryMB: 256, Region: "eu-west-1", Timeout: timeout,
		Env: []string{"LAMBDAEMU_FUNCTION=" + mode},
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

func invoke(t *testing.T, fn *lambdaemu.Function, action string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fn.Invoke(ctx, []byte(`{"action":"`+action+`"}`))
}

func TestFunctionGetsLambdaContextAndOnlyLambdaEnvironment(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	fn := start(t, "serve", 5*time.Second)
	before := time.Now()
	out, err := invoke(t, fn, "echo")
	if err != nil {
		t.Fatal(err)
	}
	var got echo
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("response %q: %v", out, err)
	}
	if len(got.RequestID) != 36 {
		t.Errorf("request id %q, want a UUID", got.RequestID)
	}
	if got.FunctionARN != "arn:aws:lambda:eu-west-1:123456789012:function:probe" {
		t.Errorf("function ARN %q", got.FunctionARN)
	}
	if d := got.Deadline.Sub(before); d <= 0 || d > 6*time.Second {
		t.Errorf("deadline %s after the invoke, want within the 5s timeout", d)
	}
	if got.FunctionName != "probe" || got.Memory != "256" || got.Region != "eu-west-1" {
		t.Errorf("environment %+v", got)
	}
	if got.Home != "" {
		t.Errorf("HOME leaked into the function: %q", got.Home)
	}
}

func TestColdStartIsMeasuredFromExecToFirstPoll(t *testing.T) {
	fn := start(t, "serve", 5*time.Second)
	if fn.ColdStart() <= 0 {
		t.Fatalf("cold start %s, want > 0", fn.ColdStart())
	}
}

func TestFunctionErrorIsReturnedAndTheFunctionStaysWarm(t *testing.T) {
	fn := start(t, "serve", 5*time.Second)
	_, err := invoke(t, fn, "fail")
	var fe *lambdaemu.FunctionError
	if !errors.As(err, &fe) || fe.Phase != "invoke" || fe.Message != "boom" {
		t.Fatalf("error %v, want the function's invoke error boom", err)
	}
	if _, err := invoke(t, fn, "echo"); err != nil {
		t.Fatalf("next invocation after a function error: %v", err)
	}
}

func TestTimedOutFunctionIsStopped(t *testing.T) {
	fn := start(t, "serve", 300*time.Millisecond)
	if _, err := invoke(t, fn, "sleep"); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if _, err := invoke(t, fn, "echo"); err == nil {
		t.Fatal("a timed-out function answered again; Lambda would have stopped it")
	}
}

func TestResponseOverSixMegabytesIsRejected(t *testing.T) {
	fn := start(t, "serve", 5*time.Second)
	_, err := invoke(t, fn, "big")
	var fe *lambdaemu.FunctionError
	if !errors.As(err, &fe) || fe.Type != "Function.ResponseSizeTooLarge" {
		t.Fatalf("error %v, want Function.ResponseSizeTooLarge", err)
	}
}

func TestExitDuringInitIsAStartError(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, err = lambdaemu.Start(context.Background(), lambdaemu.Config{Path: exe, Env: []string{"LAMBDAEMU_FUNCTION=exit"}})
	var se *lambdaemu.StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("error %v, want a StartError naming exit status 3", err)
	}
}

func TestStoppedFunctionNoLongerAnswers(t *testing.T) {
	fn := start(t, "serve", 5*time.Second)
	if err := fn.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := invoke(t, fn, "echo"); err == nil {
		t.Fatal("a stopped function answered")
	}
}
