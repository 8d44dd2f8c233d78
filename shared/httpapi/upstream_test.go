package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"platformapi/shared/httpapi"
	"platformapi/shared/superbrain"
	"platformapi/shared/upstream"
)

func schemas() map[string]httpapi.Schema {
	out := map[string]httpapi.Schema{}
	for op, sc := range superbrain.Schemas() {
		out[superbrain.ServiceID+"/"+op] = httpapi.Schema{Input: sc.Input, Output: sc.Output}
	}
	return out
}

// fakeUpstream stands for core-research: once a test points it at an
// httptest server, calls go through the real HTTP upstream adapter.
type fakeUpstream struct {
	mu  sync.Mutex
	inv upstream.Invoker
}

func (f *fakeUpstream) Invoke(ctx context.Context, r upstream.Request) (upstream.Result, error) {
	f.mu.Lock()
	inv := f.inv
	f.mu.Unlock()
	if inv == nil {
		return upstream.Result{}, upstream.ErrNotConfigured
	}
	return inv.Invoke(ctx, r)
}

// serve points core-research at handler over real HTTP (loopback).
func (e *env) serveUpstream(handler http.HandlerFunc) {
	e.t.Helper()
	hs := httptest.NewServer(handler)
	e.t.Cleanup(hs.Close)
	inv, err := upstream.NewHTTP(upstream.HTTPConfig{BaseURL: hs.URL, Timeout: 2 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	e.remote.mu.Lock()
	e.remote.inv = inv
	e.remote.mu.Unlock()
}
