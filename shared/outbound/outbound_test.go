package outbound

import "testing"

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
