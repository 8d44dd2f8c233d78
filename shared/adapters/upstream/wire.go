package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Bounds of a Retry-After the platform passes on. A missing or unreadable
// header means DefaultRetryAfter; a longer wait is capped, so a misconfigured
// or hostile upstream cannot park clients for hours; a shorter one (or a
// date in the past) becomes MinRetryAfter, since the API's Retry-After is
// whole seconds ≥ 1.
const (
	DefaultRetryAfter = time.Second
	MinRetryAfter     = time.Second
	MaxRetryAfter     = 10 * time.Minute
)

// retryAfter reads a Retry-After value: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3), rounded up to whole seconds and clamped.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return DefaultRetryAfter
	}
	var d time.Duration
	if allDigits(h) {
		secs, err := strconv.ParseInt(h, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter // only overflow fails on digits: a huge number
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
		if d > MaxRetryAfter {
			return MaxRetryAfter
		}
		d = (d + time.Second - 1).Truncate(time.Second)
	} else {
		return DefaultRetryAfter
	}
	return min(max(d, MinRetryAfter), MaxRetryAfter)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

const microDigits = 6 // 1 credit = 1_000_000 micro-credits

// parseCredits reads the decimal credits string of X-Charged-Credits into
// micro-credits exactly, in integers: digits, optionally "." and one to six
// more digits ("0", "0.02", "1.000001"). A sign, an exponent, spaces or a
// seventh fractional digit are refused rather than rounded: a charge is
// money and is either exact or rejected. At most 12 integer digits, so the
// result cannot overflow.
func parseCredits(s string) (int64, error) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if !allDigits(whole) || len(whole) > 12 || (hasFrac && (!allDigits(frac) || len(frac) > microDigits)) {
		return 0, fmt.Errorf("credits %q: want digits with at most %d decimals", s, microDigits)
	}
	frac += strings.Repeat("0", microDigits-len(frac))
	return strconv.ParseInt(whole+frac, 10, 64)
}

// formatCredits writes micro-credits as the shortest exact decimal credits
// string: 20000 → "0.02", 1000000 → "1".
func formatCredits(micro int64) string {
	s := strconv.FormatInt(micro, 10)
	if len(s) <= microDigits {
		s = strings.Repeat("0", microDigits+1-len(s)) + s
	}
	whole, frac := s[:len(s)-microDigits], strings.TrimRight(s[len(s)-microDigits:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// answer is the body of a 2xx answer. Unknown fields are ignored, so an
// upstream may add some (CHANGELOG.md: clients ignore fields they do not know).
type answer struct {
	Output json.RawMessage `json:"output"`
}

// problem is what an upstream may say with a 4xx: RFC 9457 problem+json,
// of which the detail and our field-error extension are passed on.
type problem struct {
	Detail string `json:"detail"`
	Errors []struct {
		Location string `json:"location"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// decodeObject decodes exactly one JSON object with no trailing data.
func decodeObject(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// correlationID keeps an upstream request id only if it can be echoed
// safely in a response header: 1..200 visible ASCII characters. Anything
// else is dropped; it is a convenience, not worth failing a paid call over.
func correlationID(s string) string {
	if len(s) == 0 || len(s) > 200 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return ""
		}
	}
	return s
}

// clip bounds a string from an upstream before it reaches a client.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
