package publicapi_test

import (
	"testing"

	"platformapi/shared/harness/apitest"
)

// TestTheRootPointsAtTheDocsTheDocumentHealthAndTheConsole: GET / (and /v1/)
// answers where to start, each link answers 200, and the root is the index alone:
// other unknown paths still answer a 404 problem, other methods a 405.
func TestTheRootPointsAtTheDocsTheDocumentHealthAndTheConsole(t *testing.T) {
	e := apitest.New(t)
	for _, path := range []string{"/", "/v1/"} {
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: path}), 200)
		if r.Header.Get("Content-Type") != "application/json" || r.Str("apiVersion") != "v1" {
			t.Fatalf("%s: %s %s", path, r.Header.Get("Content-Type"), r.Raw)
		}
		for field, want := range map[string]string{"docs": "/docs", "openapi": "/openapi.json", "health": "/health", "console": "/console"} {
			if r.Str(field) != want {
				t.Fatalf("%s: %s = %q, want %q", path, field, r.Str(field), want)
			}
			e.Must(e.Do(apitest.Req{Method: "GET", Path: want}), 200)
		}
	}
	for _, path := range []string{"/nothing-here", "/v1/nothing-here", "/docs/nothing"} {
		e.Must(e.Do(apitest.Req{Method: "GET", Path: path}), 404, "not_found")
	}
	if r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/"}), 405, "method_not_allowed"); r.Header.Get("Allow") != "GET" {
		t.Fatalf("Allow = %q", r.Header.Get("Allow"))
	}
}
