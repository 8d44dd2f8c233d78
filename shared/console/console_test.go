package console_test

import (
	"testing"

	"platformapi/shared/console"
)

// TestTheInitialLoadIsWithin150KBGzipped: the page, its script and its
// style sheet, as a browser receives them, stay within the budget of
// docs/console.md.
func TestTheInitialLoadIsWithin150KBGzipped(t *testing.T) {
	total := len(console.Page().Gzipped())
	for _, name := range []string{"console.js", "console.css"} {
		f, ok := console.Asset(name)
		if !ok {
			t.Fatalf("no asset %s", name)
		}
		if len(f.Gzipped()) >= len(f.Plain) {
			t.Fatalf("%s: gzipped %d bytes, plain %d", name, len(f.Gzipped()), len(f.Plain))
		}
		total += len(f.Gzipped())
	}
	if total > 150*1024 {
		t.Fatalf("the initial load is %d bytes gzipped, over 150 KB", total)
	}
	t.Logf("initial load: %d bytes gzipped", total)
}

// TestOnlyThePagesAssetsAreServed: the page is not an asset, and nothing
// outside the build is.
func TestOnlyThePagesAssetsAreServed(t *testing.T) {
	for name, want := range map[string]bool{"console.js": true, "console.css": true, "index.html": false, "../console.go": false, "": false} {
		if _, ok := console.Asset(name); ok != want {
			t.Errorf("Asset(%q): %v, want %v", name, ok, want)
		}
	}
}
