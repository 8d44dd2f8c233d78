package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicsBecomeA500WithoutLeakingInternals(t *testing.T) {
	var logs bytes.Buffer
	k := &Kernel{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := k.edge(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("database password is hunter2")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/anything", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != "application/problem+json" || rec.Header().Get("X-Request-Id") == "" {
		t.Fatalf("got %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if strings.Contains(rec.Body.String(), "hunter2") {
		t.Fatal("the panic message reached the client")
	}
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if body["code"] != "internal_error" || body["requestId"] != rec.Header().Get("X-Request-Id") {
		t.Fatalf("body = %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "hunter2") {
		t.Fatal("the panic was not logged for operators")
	}
}
