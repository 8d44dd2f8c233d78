// Package outbound holds the rules for HTTP calls to services an operator
// configures (managed-service upstreams, x402 facilitators): credentials
// travel only over TLS (plain http is allowed to loopback, for tests and
// local sidecars), and redirects are never followed, so a redirected POST is
// never replayed as a GET nor its credential carried to another host.
package outbound

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrBaseURL is a base URL that breaks the rules.
var ErrBaseURL = errors.New("base URL must be an absolute https URL without credentials, query or fragment (http only for loopback)")

// BaseURL validates raw and returns it without a trailing slash. Its error
// wraps ErrBaseURL and names the URL with any password masked: the operator
// who set it must see which one was refused, and the log must not hold a
// credential.
func BaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("an unparseable URL: %w", ErrBaseURL)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return "", fmt.Errorf("%q: %w", u.Redacted(), ErrBaseURL)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Client is an HTTP client that never follows redirects.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
