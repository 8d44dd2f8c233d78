package connectionsapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/api/apitest"
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

// waitRun polls the run until it has finished.
func waitRun(e *apitest.Env, key, id string) *apitest.Resp {
	e.T.Helper()
	e.StartRunWorker()
	for range 1000 {
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/runs/" + id, Key: key}), 200)
		if s := r.Str("status"); s != "queued" && s != "running" {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.T.Fatalf("run %s did not finish", id)
	return nil
}

func project(e *apitest.Env, root, name string) string {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": name}}), 201).Str("id")
}

// encodings are the forms in which a secret could hide: plain, hex, and
// base64 (standard and URL alphabets, at each of the three byte alignments
// it could have inside a longer value, e.g. a Basic header).
func encodings(secret string) [][]byte {
	out := [][]byte{[]byte(secret), []byte(hex.EncodeToString([]byte(secret))), []byte(strings.ToUpper(hex.EncodeToString([]byte(secret))))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			s := enc.EncodeToString(append(bytes.Repeat([]byte{0}, k), secret...))
			start := 0
			if k > 0 {
				start = 4 // the first quantum mixes in the padding bytes
			}
			out = append(out, []byte(s[start:len(s)-4])) // the last may be padded or cut
		}
	}
	return out
}

// find returns the encoding of secret found in haystack, or nil.
func find(haystack [][]byte, secret string) []byte {
	for _, needle := range encodings(secret) {
		for _, h := range haystack {
			if bytes.Contains(h, needle) {
				return needle
			}
		}
	}
	return nil
}
