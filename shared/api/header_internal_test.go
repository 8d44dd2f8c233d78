package api

import (
	"net/http"
	"os"
	"regexp"
	"testing"
)

// headerValue skips Get's canonicalisation, so it finds a header only by
// its canonical name (the form net/http stores a received header under):
// every name the kernel passes it must be canonical.
func TestTheRequestPathReadsHeadersByTheirCanonicalNames(t *testing.T) {
	uses := regexp.MustCompile(`headerValue\([^,]+, "([^"]+)"\)`)
	seen := 0
	for _, file := range []string{"enforce.go", "middleware.go", "server.go", "audit.go"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(src), -1) {
			seen++
			if http.CanonicalHeaderKey(m[1]) != m[1] {
				t.Errorf("%s reads header %q, whose canonical name is %q", file, m[1], http.CanonicalHeaderKey(m[1]))
			}
		}
	}
	if seen == 0 {
		t.Fatal("no headerValue call found: the test no longer reads the request path")
	}
	h := http.Header{}
	h.Set("x-service-project", "prj_1")
	if headerValue(h, "X-Service-Project") != "prj_1" || headerValue(h, "Idempotency-Key") != "" {
		t.Fatal("headerValue does not read what Header.Set stored")
	}
}
