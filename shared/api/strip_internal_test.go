package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The operation sees its path without the version prefix, escaped form
// included, while the access line, whatever runs after the operation and
// the caller's own request keep the path as it came; a request that did
// not come through edge is stripped as http.StripPrefix strips it.
func TestTheVersionPrefixIsCutForTheOperationOnly(t *testing.T) {
	for name, c := range map[string]struct {
		target            string
		wantPath, wantRaw string
		viaEdge           bool
	}{
		"plain":         {target: "/v1/credits/balance", wantPath: "/credits/balance", viaEdge: true},
		"escaped slash": {target: "/v1/files/a%2Fb", wantPath: "/files/a/b", wantRaw: "/files/a%2Fb", viaEdge: true},
		"without edge":  {target: "/v1/files/a%2Fb", wantPath: "/files/a/b", wantRaw: "/files/a%2Fb"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			k := &Kernel{log: slog.New(slog.NewJSONHandler(&logs, nil))}
			var seenPath, seenRaw, afterPath string
			inner := stripVersion("/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seenPath, seenRaw = r.URL.Path, r.URL.RawPath
				w.WriteHeader(http.StatusNoContent)
			}))
			h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inner.ServeHTTP(w, r)
				afterPath = r.URL.Path
			}))
			if c.viaEdge {
				h = k.edge(h)
			}
			req := httptest.NewRequest("GET", c.target, nil)
			original := req.URL.Path
			h.ServeHTTP(httptest.NewRecorder(), req)
			if seenPath != c.wantPath || seenRaw != c.wantRaw {
				t.Errorf("the operation saw %q (raw %q); want %q (raw %q)", seenPath, seenRaw, c.wantPath, c.wantRaw)
			}
			if afterPath != original || req.URL.Path != original {
				t.Errorf("after the operation the path is %q and the caller's is %q; want %q", afterPath, req.URL.Path, original)
			}
			if c.viaEdge {
				var line struct{ Path string }
				if err := json.Unmarshal(logs.Bytes(), &line); err != nil || line.Path != original {
					t.Errorf("access line path %q (%v); want %q", line.Path, err, original)
				}
			}
		})
	}
}
