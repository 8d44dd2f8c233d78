// Package redact removes secrets from text that is about to be logged: a
// secret sent by mistake in a URL path or a header must not end up in the
// access log verbatim. It knows the shapes of the
// platform's own secrets and, generically, of long random tokens; it never
// needs to know whether a string really is a valid secret.
package redact

import (
	"regexp"
	"strings"
)

// Mark replaces what was removed.
const Mark = "[REDACTED]"

// known are the platform's secret shapes, each replaced keeping only its
// public prefix: API key secrets (psk_…, see keys.NewSecret), webhook
// signing secrets (whsec_…), credit tokens (ct1.<payload>.<signature>, see
// credittoken) and whatever follows an HTTP Bearer scheme.
var known = regexp.MustCompile(`psk_[A-Za-z0-9_-]+|whsec_[A-Za-z0-9_+/=-]+|ct1\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?|(?i:bearer)[ \t]+[^\s"',;]+`)

// run is a candidate random token: base64url or hex characters (plus the
// standard base64 '+' and padding), 32 or more. '/' is left out so that
// URL paths, whose segments are ids, are not taken for one run.
var run = regexp.MustCompile(`[A-Za-z0-9_+-]{32,}={0,2}`)

// Secrets returns s with every secret-shaped part replaced by Mark.
func Secrets(s string) string {
	s = known.ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(m, "psk_"):
			return "psk_" + Mark
		case strings.HasPrefix(m, "whsec_"):
			return "whsec_" + Mark
		case strings.HasPrefix(m, "ct1."):
			return "ct1." + Mark
		}
		return "Bearer " + Mark
	})
	return run.ReplaceAllStringFunc(s, func(m string) string {
		if random(m) {
			return Mark
		}
		return m
	})
}

// random reports whether a long run looks like key material rather than a
// word or an identifier: hex with both digits and letters (a hash, a hex
// key), or base64 mixing upper case, lower case and digits, which 32 random
// base64 characters do with near certainty while the platform's ids (upper
// case ULIDs behind a lower-case prefix, at most 31 characters), operation
// names and kebab-case names do not.
func random(m string) bool {
	var upper, lower, digit, nonHex bool
	for i := 0; i < len(m); i++ {
		switch c := m[i]; {
		case 'A' <= c && c <= 'Z':
			upper = true
			nonHex = nonHex || c > 'F'
		case 'a' <= c && c <= 'z':
			lower = true
			nonHex = nonHex || c > 'f'
		case '0' <= c && c <= '9':
			digit = true
		default:
			nonHex = true
		}
	}
	return upper && lower && digit || !nonHex && digit && (upper || lower)
}
