package connectionsapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"platformapi/shared/harness/apitest"
)

// seen records the requests the fake core-research received.
type seen struct {
	mu   sync.Mutex
	hdrs []http.Header
}

func (s *seen) add(h http.Header) { s.mu.Lock(); s.hdrs = append(s.hdrs, h.Clone()); s.mu.Unlock() }
func (s *seen) all() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header{}, s.hdrs...)
}
func (s *seen) last(t *testing.T) http.Header {
	t.Helper()
	all := s.all()
	if len(all) == 0 {
		t.Fatal("the service received no call")
	}
	return all[len(all)-1]
}

// serve points core-research at a fake that answers status (200 with an
// output and a charge) and records each request's headers.
func serve(e *apitest.Env, status int) *seen {
	s := &seen{}
	e.ServeUpstream(func(w http.ResponseWriter, r *http.Request) {
		s.add(r.Header)
		if status != http.StatusOK {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("X-Charged-Credits", "0.25")
		_ = json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"answer": 42}})
	})
	return s
}

func create(e *apitest.Env, key string, headers map[string]string, body map[string]any) *apitest.Resp {
	e.T.Helper()
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/connections", Key: key, Idem: apitest.Idem(), Headers: headers, Body: body})
}

func bearer(token string, services ...string) map[string]any {
	if len(services) == 0 {
		services = []string{"core-research"}
	}
	return map[string]any{"label": "vendor", "type": "bearer", "credentials": map[string]any{"token": token}, "serviceIds": services}
}

func patch(e *apitest.Env, key, id string, headers map[string]string, body map[string]any) *apitest.Resp {
	e.T.Helper()
	return e.Do(apitest.Req{Method: "PATCH", Path: "/v1/connections/" + id, Key: key, Idem: apitest.Idem(), Headers: headers, Body: body})
}

func invoke(e *apitest.Env, key string, headers map[string]string, slots map[string]string) *apitest.Resp {
	e.T.Helper()
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/services/core-research/invoke", Key: key, Idem: apitest.Idem(), Headers: headers,
		Body: map[string]any{"operationId": "research.query", "input": map[string]any{"question": "why"}, "connections": slots}})
}

func createRun(e *apitest.Env, key string, headers map[string]string, slots map[string]string) *apitest.Resp {
	e.T.Helper()
	return e.Do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: key, Idem: apitest.Idem(), Headers: headers,
		Body: map[string]any{"serviceId": "core-research", "operationId": "research.query", "input": map[string]any{"question": "why"}, "connections": slots}})
}

func project(e *apitest.Env, root, name string) string {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": name}}), 201).Str("id")
}

// find returns the encoding of secret found in haystack, or nil.
func find(haystack [][]byte, secret string) []byte {
	for _, needle := range apitest.Encodings(secret) {
		for _, h := range haystack {
			if bytes.Contains(h, needle) {
				return needle
			}
		}
	}
	return nil
}
