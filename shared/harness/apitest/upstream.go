package apitest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"platformapi/shared/adapters/upstream"
)

// FakeUpstream stands for core-research: once a test points it at an
// httptest server, calls go through the real HTTP upstream adapter.
type FakeUpstream struct {
	mu  sync.Mutex
	inv upstream.Invoker
}

func (f *FakeUpstream) Invoke(ctx context.Context, r upstream.Request) (upstream.Result, error) {
	f.mu.Lock()
	inv := f.inv
	f.mu.Unlock()
	if inv == nil {
		return upstream.Result{}, upstream.ErrNotConfigured
	}
	return inv.Invoke(ctx, r)
}

// ServeUpstream points core-research at handler over real HTTP (loopback).
func (e *Env) ServeUpstream(handler http.HandlerFunc) {
	e.T.Helper()
	hs := httptest.NewServer(handler)
	e.T.Cleanup(hs.Close)
	inv, err := upstream.NewHTTP(upstream.HTTPConfig{BaseURL: hs.URL, Timeout: 2 * time.Second})
	if err != nil {
		e.T.Fatal(err)
	}
	e.Remote.mu.Lock()
	e.Remote.inv = inv
	e.Remote.mu.Unlock()
}
