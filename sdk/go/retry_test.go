package platform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	platform "github.com/platformapi/platformapi/sdk/go"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// The server's answers here are scripted: an in-progress conflict of the
// same Idempotency-Key and a 503 are waited out (Retry-After) and retried
// with that key; any other 409 is the result at once.
func TestInProgressConflictsAnd503sAreRetriedWithTheSameKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	script := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"status":409,"code":"idempotency_request_in_progress","detail":"running"}`))
		},
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(503)
		},
		func(w http.ResponseWriter) {
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{"id":"prj_1","name":"x"}`))
		},
		func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"status":409,"code":"idempotency_key_reused","detail":"other body"}`))
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		script[len(keys)-1](w)
	}))
	defer srv.Close()
	var slept []time.Duration
	c := platform.New(platform.Options{BaseURL: srv.URL, APIKey: "sk_x", MaxAttempts: 5,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	r, err := c.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "x"})
	if err != nil || !r.OK || r.Value.ID != "prj_1" || r.Attempts != 3 {
		t.Fatalf("%v %+v", err, r)
	}
	if keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Fatalf("keys %q", keys)
	}
	if len(slept) != 2 || slept[0] < 2*time.Second || slept[1] < 3*time.Second {
		t.Fatalf("slept %v", slept)
	}
	r, err = c.CreateProject(ctx(t), platform.CreateProjectRequest{Name: "y"})
	if err != nil || r.OK || r.Attempts != 1 || r.Error.Code != "idempotency_key_reused" || r.Error.Detail != "other body" {
		t.Fatalf("%v %+v", err, r)
	}
}
