package keys

import (
	"slices"

	"platformapi/shared/base/routes"
)

// Scopes is the complete scope set (docs/keys.md), in the order every
// group declared its own (routes.Scopes): a first key holds them all, in
// that order.
var Scopes = routes.ScopeNames()

// IsScope reports whether s is a known scope.
func IsScope(s string) bool { return slices.Contains(Scopes, s) }

// Privacy tiers, from loosest to strictest. A child keeps its parent's tier
// or a stricter one.
//
//   - standard: audit events and request logs keep the end-user id as sent.
//   - pseudonymous: they keep only HMAC-SHA-256 of the end-user id under a
//     sealed per-account secret (package pseudonym), so one user's events
//     still correlate but the id itself is never stored and cannot be
//     guessed back from the account id.
//   - minimal: they keep no end-user id at all.
const (
	TierStandard     = "standard"
	TierPseudonymous = "pseudonymous"
	TierMinimal      = "minimal"
)

// Tiers in order of strictness.
var Tiers = []string{TierStandard, TierPseudonymous, TierMinimal}

// TierRank orders tiers; -1 for an unknown tier.
func TierRank(t string) int { return slices.Index(Tiers, t) }
