package publicapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"platformapi/shared/harness/apitest"
)

// TestTheBundledRendererIsThePinnedVersion: the committed bundle is what
// `make docs-assets` fetches for the pin in mk/docs.mk, so a bumped pin
// without a re-fetch (or a hand-edited bundle version) fails here.
func TestTheBundledRendererIsThePinnedVersion(t *testing.T) {
	mk, err := os.ReadFile("../../../../mk/docs.mk")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^REDOC_VERSION := (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("mk/docs.mk pins no REDOC_VERSION")
	}
	gz, err := os.ReadFile("assets/redoc.standalone.js.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if want := `ReDoc Version: ","` + string(m[1]) + `"`; !bytes.Contains(js, []byte(want)) {
		got := []byte("no version")
		if g := regexp.MustCompile(`ReDoc Version: ","([^"]*)"`).FindSubmatch(js); g != nil {
			got = g[1]
		}
		t.Fatalf("the committed bundle is not Redoc %s but %s: run make docs-assets", m[1], got)
	}
}

// TestTheDocsPageLoadsItsRendererFromThisServer: no CDN, the script comes
// from the same function, gzipped for browsers and plain for the rest.
func TestTheDocsPageLoadsItsRendererFromThisServer(t *testing.T) {
	e := apitest.New(t)
	for _, prefix := range []string{"", "/v1"} {
		page := e.Must(e.Do(apitest.Req{Method: "GET", Path: prefix + "/docs"}), 200)
		if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Fatalf("CSP = %q", csp)
		}
		if strings.Contains(string(page.Raw), "http") {
			t.Fatalf("the page loads something from elsewhere: %s", page.Raw)
		}
		for _, enc := range []string{"gzip", "identity"} {
			req, _ := http.NewRequest("GET", e.URL+prefix+"/docs/assets/redoc.standalone.js", nil)
			req.Header.Set("Accept-Encoding", enc) // set by hand: the transport then leaves the body as it came
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
				t.Fatalf("%s: %d %s", enc, res.StatusCode, res.Header.Get("Content-Type"))
			}
			if gotGzip := res.Header.Get("Content-Encoding") == "gzip"; gotGzip != (enc == "gzip") || gotGzip != bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
				t.Fatalf("%s: Content-Encoding %q on a body starting %x", enc, res.Header.Get("Content-Encoding"), body[:4])
			}
			if enc == "identity" && !bytes.Contains(body, []byte("Redoc")) {
				t.Fatalf("the plain asset is not Redoc")
			}
		}
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/docs/assets/other.js"}), 404, "not_found")
}

// TestTheDocsPolicyAdmitsTheBundlesLogoAndNoOtherImageFromElsewhere: every
// https:// image the committed bundle loads is admitted by the page's
// img-src, by its full URL; no other origin is.
func TestTheDocsPolicyAdmitsTheBundlesLogoAndNoOtherImageFromElsewhere(t *testing.T) {
	gz, err := os.ReadFile("assets/redoc.standalone.js.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	images := regexp.MustCompile(`"img",\{[^}]*src:"(https://[^"]+)"`).FindAllSubmatch(js, -1)
	if len(images) == 0 {
		t.Fatal("the bundle loads no image from elsewhere: the policy's exception is stale")
	}
	e := apitest.New(t)
	csp := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/docs"}), 200).Header.Get("Content-Security-Policy")
	var imgSrc []string
	for _, d := range strings.Split(csp, ";") {
		if f := strings.Fields(d); len(f) > 0 && f[0] == "img-src" {
			imgSrc = f[1:]
		}
	}
	var external []string
	for _, src := range imgSrc {
		if strings.Contains(src, ":/") || src == "https:" || src == "*" {
			external = append(external, src)
		}
	}
	var want []string
	for _, m := range images {
		want = append(want, string(m[1]))
	}
	if strings.Join(external, " ") != strings.Join(want, " ") {
		t.Fatalf("img-src admits %v from elsewhere, the bundle loads %v", external, want)
	}
}
