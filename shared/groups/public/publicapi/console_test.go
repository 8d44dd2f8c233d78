package publicapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"platformapi/shared/groups/public/publicapi"
	"platformapi/shared/harness/apitest"
)

// TestTheConsoleIsServedStaticGzippedUnderAStrictPolicy: /console and its
// assets answer at the root and under /v1, gzipped for browsers and plain
// for the rest, each under a policy that allows no inline script or style,
// no other origin and no framing; the page itself loads nothing from
// elsewhere and carries no inline script or style.
func TestTheConsoleIsServedStaticGzippedUnderAStrictPolicy(t *testing.T) {
	e := apitest.New(t)
	for _, prefix := range []string{"", "/v1"} {
		for _, c := range []struct{ path, contentType, contains string }{
			{"/console", "text/html; charset=utf-8", `<main id="main"`},
			{"/console/assets/console.js", "text/javascript; charset=utf-8", "Platform API console"},
			{"/console/assets/console.css", "text/css; charset=utf-8", ".uplot"},
		} {
			for _, enc := range []string{"gzip", "identity"} {
				res, body := get(t, e.URL+prefix+c.path, enc)
				if res.StatusCode != 200 || res.Header.Get("Content-Type") != c.contentType {
					t.Fatalf("%s%s %s: %d %s", prefix, c.path, enc, res.StatusCode, res.Header.Get("Content-Type"))
				}
				csp := res.Header.Get("Content-Security-Policy")
				for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
					if !strings.Contains(csp, want) {
						t.Fatalf("%s: CSP %q lacks %q", c.path, csp, want)
					}
				}
				if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
					t.Fatalf("%s: CSP %q allows inline code or another origin", c.path, csp)
				}
				if gotGzip := res.Header.Get("Content-Encoding") == "gzip"; gotGzip != (enc == "gzip") || gotGzip != bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
					t.Fatalf("%s %s: Content-Encoding %q on a body starting %x", c.path, enc, res.Header.Get("Content-Encoding"), body[:4])
				}
				if enc == "gzip" {
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					if body, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Contains(body, []byte(c.contains)) {
					t.Fatalf("%s%s is not the console's: %.200s", prefix, c.path, body)
				}
				if c.path == "/console" {
					page := string(body)
					if strings.Contains(page, "http") || regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(page) || regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=`).MatchString(page) {
						t.Fatalf("the page loads from elsewhere or carries inline code or style:\n%s", page)
					}
				}
			}
		}
	}
	for _, path := range []string{"/console/assets/other.js", "/console/assets/index.html", "/console/nothing/here"} {
		e.Must(e.Do(apitest.Req{Method: "GET", Path: path}), 404, "not_found")
	}
}

// TestTheConsoleIsNoOperationOfTheAPI: the console is a client of the API,
// not part of it; neither the embedded document nor the one the kernel
// builds has a path or an operation of it (GET /'s answer may link it), and
// its access lines still name it.
func TestTheConsoleIsNoOperationOfTheAPI(t *testing.T) {
	e := apitest.New(t)
	for name, raw := range map[string][]byte{"embedded": publicapi.Document, "built": must(e.Kernel.OpenAPI().MarshalJSON())} {
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Paths) == 0 {
			t.Fatalf("the %s document: %v", name, err)
		}
		for path, ops := range doc.Paths {
			if strings.Contains(path, "console") {
				t.Errorf("the %s OpenAPI document lists the console's path %s", name, path)
			}
			for _, op := range ops {
				var o struct {
					OperationID string `json:"operationId"`
				}
				if json.Unmarshal(op, &o) == nil && strings.HasPrefix(o.OperationID, "console.") {
					t.Errorf("the %s OpenAPI document lists the console's operation %s", name, o.OperationID)
				}
			}
		}
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/console"}), 200)
	if !strings.Contains(e.Logs.String(), `"operation":"console.read"`) {
		t.Fatalf("no access line names console.read:\n%s", e.Logs.String())
	}
}

// TestAnAssetPathIsRedactedInTheAccessLog: the asset path holds a client's
// text, so a secret pasted there is redacted on the access line as on any
// other request's.
func TestAnAssetPathIsRedactedInTheAccessLog(t *testing.T) {
	e := apitest.New(t)
	secret, _ := e.RootKey(1, nil)
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/console/assets/" + secret}), 404, "not_found")
	if strings.Contains(e.Logs.String(), secret) {
		t.Fatal("the access line holds the secret")
	}
	if !strings.Contains(e.Logs.String(), `"operation":"console.assets.read"`) {
		t.Fatalf("no access line names console.assets.read:\n%s", e.Logs.String())
	}
}

func get(t *testing.T, url, encoding string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", encoding) // set by hand: the transport then leaves the body as it came
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
