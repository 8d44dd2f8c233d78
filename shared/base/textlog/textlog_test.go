package textlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/jsonlog"
	"platformapi/shared/base/textlog"
)

// The format follows the reader: JSON on Lambda whatever LOG_FORMAT says,
// LOG_FORMAT's when set, else text at a terminal and JSON into anything
// else.
func TestTheFormatIsTextAtATerminalOrWhenAskedAndJSONOnLambdaAndElsewhere(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no terminal device to write to: %v", err)
	}
	defer tty.Close()
	for _, tc := range []struct {
		name   string
		w      io.Writer
		env    map[string]string
		isText bool
	}{
		{"terminal", tty, nil, true},
		{"pipe or file", &bytes.Buffer{}, nil, false},
		{"text asked", &bytes.Buffer{}, map[string]string{"LOG_FORMAT": "text"}, true},
		{"json asked at a terminal", tty, map[string]string{"LOG_FORMAT": "json"}, false},
		{"lambda at a terminal", tty, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "keys"}, false},
		{"lambda, text asked", &bytes.Buffer{}, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "keys", "LOG_FORMAT": "text"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := textlog.Choose(tc.w, nil, func(k string) string { return tc.env[k] })
			_, isText := h.(*textlog.Handler)
			_, isJSON := h.(*jsonlog.Handler)
			if isText != tc.isText || isJSON == tc.isText {
				t.Fatalf("handler %T, want text %v", h, tc.isText)
			}
		})
	}
}

// An access line reads as one line: time, level, message, then method,
// path, status and latency bare, then the rest as key=value, values with
// spaces or line breaks quoted, group members keyed group.member; the EMF
// block, which only CloudWatch reads from JSON, is left out.
func TestAnAccessLineReadsAsOneShortLine(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(textlog.New(&out, nil)).With("function", "local")
	at := time.Date(2026, 11, 28, 23, 12, 47, 123e6, time.Local)
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("requestId", "req_0123"), slog.String("method", "POST"), slog.String("path", "/v1/api-keys"),
		slog.Int("status", 201), slog.Int64("latencyMicros", 1234), slog.Int("bytes", 57),
		slog.String("operation", "keys.create"), slog.String("endUser", "ann \"a\"\nb"),
		slog.Group("audit", slog.String("code", "x")), slog.Group("_aws", slog.Int64("Timestamp", 1)))
	if err := logger.Handler().Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	want := `23:12:47.123 INFO  request POST /v1/api-keys 201 1.234ms function=local requestId=req_0123 bytes=57 operation=keys.create endUser="ann \"a\"\nb" audit.code=x` + "\n"
	if out.String() != want {
		t.Fatalf("wrote\n%q\nwant\n%q", out.String(), want)
	}
	if json.Valid(bytes.TrimSpace(out.Bytes())) {
		t.Fatal("the text line is JSON")
	}
}

// Lines below the level are not written; an error's level is written as
// slog names it.
func TestTheTextHandlerKeepsTheLevel(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(textlog.New(&out, slog.LevelWarn))
	logger.Info("quiet")
	logger.Error("audit record failed", "error", "disk full")
	if got := out.String(); strings.Contains(got, "quiet") || !strings.Contains(got, "ERROR audit record failed error=\"disk full\"") {
		t.Fatalf("wrote %q", got)
	}
}
