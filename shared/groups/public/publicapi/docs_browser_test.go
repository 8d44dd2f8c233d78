//go:build browser

package publicapi_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"platformapi/shared/groups/public/publicapi"
	"platformapi/shared/harness/apitest"
)

// TestTheDocsPageRendersEveryOperation renders /docs in headless Chromium
// (make docs-test) and finds every operation of the document on the
// rendered page, as Redoc's section for it; DOCS_SCREENSHOT names where a
// screenshot goes for people to look at.
func TestTheDocsPageRendersEveryOperation(t *testing.T) {
	e := apitest.New(t)
	dom := chromium(t, "--dump-dom", e.URL+"/docs")
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(publicapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, item := range doc.Paths {
		for _, op := range item {
			n++
			if !strings.Contains(dom, `id="operation/`+op.OperationID+`"`) {
				t.Errorf("operation %s is not on the rendered page", op.OperationID)
			}
		}
	}
	for _, want := range []string{"Idempotency-Key", "curl", "Go (net/http)", "TypeScript (fetch)", "Limit operation"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page never shows %q", want)
		}
	}
	t.Logf("%d operations rendered, %d bytes of DOM", n, len(dom))
	if shot := os.Getenv("DOCS_SCREENSHOT"); shot != "" {
		chromium(t, "--screenshot="+shot, "--window-size=1440,1800", e.URL+"/docs")
		t.Logf("screenshot: %s", shot)
	}
}

// chromium runs headless Chromium on a page, letting its scripts run for
// up to 20 s of virtual time, and returns what it printed. Virtual time
// runs as fast as the machine lets it: one render took more than 90 s at
// a load average of 17, so the bound is a guard against a hang.
func chromium(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "chromium"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=20000"}
	out, err := exec.CommandContext(ctx, bin, append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return string(out)
}
