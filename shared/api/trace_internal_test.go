package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"platformapi/shared/base/emf/emftest"
)

// On Lambda, every log line of a request names the request id the client
// got, the invocation's Lambda request id and its X-Ray trace, so that one
// leads to the others; outside Lambda the latter two are absent.
func TestEveryLineOfARequestNamesItsInvocationAndTrace(t *testing.T) {
	for name, tc := range map[string]struct {
		lambda          bool
		awsID, traceID  string
		wantLambdaAttrs bool
	}{
		"on lambda":  {lambda: true, awsID: "8f5d-invocation", traceID: "1-5759e988-bd862e3fe1be46a994272793", wantLambdaAttrs: true},
		"local only": {lambda: false},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			k := &Kernel{log: slog.New(slog.NewJSONHandler(&logs, nil))}
			h := k.edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				Logger(r.Context()).Info("inside the handler")
				w.WriteHeader(http.StatusNoContent)
			}))
			req := httptest.NewRequest("GET", "/v1/anything", nil)
			if tc.lambda {
				ctx := lambdacontext.NewContext(req.Context(), &lambdacontext.LambdaContext{AwsRequestID: tc.awsID})
				//lint:ignore SA1029 the Lambda runtime (aws-lambda-go) puts the trace header under this string key
				ctx = context.WithValue(ctx, "x-amzn-trace-id", "Root="+tc.traceID+";Parent=53995c3f42cd8ad8;Sampled=1")
				req = req.WithContext(ctx)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			lines := bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n"))
			if len(lines) != 2 {
				t.Fatalf("%d lines: %s", len(lines), logs.String())
			}
			for _, l := range lines {
				var line map[string]any
				if err := json.Unmarshal(l, &line); err != nil {
					t.Fatal(err)
				}
				if line["requestId"] != rec.Header().Get("X-Request-Id") {
					t.Errorf("line %v lacks the response's request id", line)
				}
				_, hasAWS := line["awsRequestId"]
				_, hasTrace := line["traceId"]
				if hasAWS != tc.wantLambdaAttrs || hasTrace != tc.wantLambdaAttrs ||
					tc.lambda && (line["awsRequestId"] != tc.awsID || line["traceId"] != tc.traceID) {
					t.Errorf("line %v: invocation attributes wrong", line)
				}
			}
		})
	}
}

// A panic is answered 500 and counted as one in the request's metrics.
func TestAPanicIsCountedAsAServerError(t *testing.T) {
	var logs bytes.Buffer
	k := &Kernel{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := k.edge(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/anything", nil))
	lines := emftest.Lines(t, logs.String())
	if len(lines) != 1 || lines[0]["Errors5xx"] != 1.0 || lines[0]["Errors4xx"] != 0.0 || lines[0]["Operation"] != "unrouted" {
		t.Fatalf("metric lines %v", lines)
	}
}
