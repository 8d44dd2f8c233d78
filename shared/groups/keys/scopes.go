package keys

import "slices"

// Scopes is the complete scope set (docs/keys.md).
var Scopes = []string{
	"services:read", "services:invoke", "credits:read", "credits:write",
	"projects:read", "projects:write", "usage:read", "audit:read",
	"files:read", "files:write", "connections:read", "connections:write",
	"databases:read", "databases:write", "wallets:read", "wallets:create",
	"wallets:sign", "wallets:transact", "trading:read", "trading:execute",
	"runs:read", "runs:write", "approvals:read", "approvals:write",
	"artifacts:read", "webhooks:read", "webhooks:write", "api_keys:manage",
}

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
