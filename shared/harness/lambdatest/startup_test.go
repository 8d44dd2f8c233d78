package lambdatest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"platformapi/shared/harness/lambdarie"
)

// TestInitDurationIsReadFromTheEmulatorsInitReport: the init duration comes
// from the emulator's INIT REPORT once the first invocation has run init,
// not from the REPORT line's figure, which times only init's start.
func TestInitDurationIsReadFromTheEmulatorsInitReport(t *testing.T) {
	fn := start(t, "public", backends[0].env(t))
	if _, ok := fn.InitDuration(); ok {
		t.Fatal("an init duration before any invocation: init runs at the first one")
	}
	checkAnswer(t, invoke(t, fn, fixture(t, "health.json")), 200, "")
	d, ok := fn.InitDuration()
	if !ok || d < time.Millisecond {
		t.Fatalf("init duration %s (%v), want the bootstrap's init of at least a millisecond", d, ok)
	}
	t.Logf("public init %s", d)
}

// TestStartupFailureIsReportedAsInitErrorAndOneJSONLine: a function that
// cannot build its runtime tells the Runtime API why and logs the cause as
// one JSON line, instead of serving or dying silently.
func TestStartupFailureIsReportedAsInitErrorAndOneJSONLine(t *testing.T) {
	fn := start(t, "keys", []string{"AWS_REGION=us-east-1"})
	_, err := fn.Invoke(context.Background(), []byte(`{}`))
	var fe *lambdarie.FunctionError
	if !errors.As(err, &fe) || fe.Phase != "init" || fe.Type != "Runtime.InitError" || !strings.Contains(fe.Message, "CREDIT_TOKEN_SECRET_ARN") {
		t.Fatalf("error %v, want a Runtime.InitError naming the missing CREDIT_TOKEN_SECRET_ARN", err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(fn.Logs()), "\n") {
		if !platformLine(l) {
			lines = append(lines, l)
		}
	}
	var line struct{ Level, Msg, Function, Error string }
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &line) != nil {
		t.Fatalf("output %q, want exactly one JSON line", lines)
	}
	if line.Level != "ERROR" || line.Function != "keys" || !strings.Contains(line.Error, "CREDIT_TOKEN_SECRET_ARN") {
		t.Errorf("log line %+v, want an ERROR from keys naming the cause", line)
	}
}

// platformLine is one of the lines Lambda itself writes to a function's log.
func platformLine(l string) bool {
	for _, p := range []string{"START RequestId: ", "END RequestId: ", "REPORT RequestId: "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}
