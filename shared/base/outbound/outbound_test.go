package outbound

import (
	"errors"
	"strings"
	"testing"
)

func TestBaseURLNeedsTLSExceptOnLoopback(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://facilitator.example/x402/":   true,
		"http://127.0.0.1:8080":               true,
		"http://localhost:9000/base":          true,
		"http://[::1]:9000":                   true,
		"http://facilitator.example":          false,
		"https://user:pw@facilitator.example": false,
		"https://facilitator.example/?a=1":    false,
		"https://facilitator.example/#x":      false,
		"/relative":                           false,
		"ftp://facilitator.example":           false,
	} {
		got, err := BaseURL(raw)
		if (err == nil) != ok {
			t.Errorf("BaseURL(%q) = %q, %v; want ok=%v", raw, got, err, ok)
		}
		if ok && got[len(got)-1] == '/' {
			t.Errorf("BaseURL(%q) kept a trailing slash", raw)
		}
	}
}

// A refused base URL is named in the error, so the operator sees which
// setting to fix, with its password masked, so the log holds no credential.
func TestARefusedBaseURLIsNamedWithoutItsPassword(t *testing.T) {
	for _, tc := range []struct{ raw, named string }{
		{"http://facilitator.example", `"http://facilitator.example"`},
		{"https://user:hunter2@facilitator.example/x", `"https://user:xxxxx@facilitator.example/x"`},
		{"https://facilitator.example/?a=1", `"https://facilitator.example/?a=1"`},
		{"https://user:hunter2@facilitator.example/%zz", "an unparseable URL"},
	} {
		_, err := BaseURL(tc.raw)
		if !errors.Is(err, ErrBaseURL) {
			t.Fatalf("BaseURL(%q) = %v, want ErrBaseURL", tc.raw, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tc.named) || strings.Contains(msg, "hunter2") {
			t.Errorf("BaseURL(%q): %q, want it to name %s and never the password", tc.raw, msg, tc.named)
		}
	}
}
