package lambdatest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"platformapi/shared/lambdaemu"
)

// TestHarnessRecordsColdStart: the benchmark reports init time from this.
func TestHarnessRecordsColdStart(t *testing.T) {
	fn := start(t, "public", backends[0].env(t))
	if fn.ColdStart() <= 0 {
		t.Fatalf("cold start %s, want > 0", fn.ColdStart())
	}
	t.Logf("public cold start %s", fn.ColdStart())
}

// TestStartupFailureIsReportedAsInitErrorAndOneJSONLine: a function that
// cannot build its runtime tells the Runtime API why and logs the cause as
// one JSON line, instead of serving or dying silently.
func TestStartupFailureIsReportedAsInitErrorAndOneJSONLine(t *testing.T) {
	path := binary(t, "keys") // builds every function once; not part of the init deadline
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := lambdaemu.Start(ctx, lambdaemu.Config{
		Path: path, Name: "keys",
		Env: []string{"AWS_REGION=us-east-1"},
	})
	var fe *lambdaemu.FunctionError
	if !errors.As(err, &fe) || fe.Phase != "init" || fe.Type != "Runtime.InitError" || !strings.Contains(fe.Message, "CREDIT_TOKEN_SECRET_ARN") {
		t.Fatalf("error %v, want a Runtime.InitError naming the missing CREDIT_TOKEN_SECRET_ARN", err)
	}
	var se *lambdaemu.StartError
	if !errors.As(err, &se) {
		t.Fatalf("error %T, want a *lambdaemu.StartError", err)
	}
	lines := strings.Split(strings.TrimSpace(se.Logs), "\n")
	var line struct{ Level, Msg, Function, Error string }
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &line) != nil {
		t.Fatalf("output %q, want exactly one JSON line", se.Logs)
	}
	if line.Level != "ERROR" || line.Function != "keys" || !strings.Contains(line.Error, "CREDIT_TOKEN_SECRET_ARN") {
		t.Errorf("log line %+v, want an ERROR from keys naming the cause", line)
	}
}
