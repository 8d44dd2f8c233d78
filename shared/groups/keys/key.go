// Package keys holds API keys: their record, secrets, the delegation rules
// that keep every child narrower than all its ancestors (docs/keys.md), and
// their persistence on the item-store port. It never sees HTTP.
package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"platformapi/shared/base/ids"
	"platformapi/shared/domain/limits"
)

// MaxDepth is the deepest delegation chain (docs/keys.md).
const MaxDepth = 8

// Key is an API key's record as clients see it, plus the
// internal fields needed to authorise requests.
type Key struct {
	ID                string     `json:"id"`
	Label             string     `json:"label"`
	Prefix            string     `json:"prefix" doc:"Leading characters of the secret, to recognise it"`
	Scopes            []string   `json:"scopes"`
	AllowedServices   []string   `json:"allowedServices" nullable:"true" doc:"Resolved service allowlist, or null when unbounded"`
	AllowedOperations []string   `json:"allowedOperations" nullable:"true" doc:"Resolved exact operation allowlist, or null when unbounded"`
	Limits            limits.Set `json:"limits"`
	ExpiresAt         *time.Time `json:"expiresAt"`
	ParentID          *string    `json:"parentId"`
	ProjectID         *string    `json:"projectId"`
	PrivacyTier       string     `json:"privacyTier" enum:"standard,pseudonymous,minimal"`
	Depth             int        `json:"depth"`
	CreatedAt         time.Time  `json:"createdAt"`
	RevokedAt         *time.Time `json:"revokedAt"`
	Status            string     `json:"status" enum:"active,revoked,expired" doc:"Effective status, counting ancestors"`
	AllowedIPs        []string   `json:"allowedIps" nullable:"true" doc:"Client networks (CIDR, normalised) the key may be used from, or null when any; requests from elsewhere are 403 ip_denied"`
	NotBefore         *time.Time `json:"notBefore" doc:"Before this time the key is 401 key_not_yet_valid; null: valid from creation"`
	Metadata          Metadata   `json:"metadata" doc:"The creator's own labels; never used for policy"`
	LastUsedAt        *time.Time `json:"lastUsedAt" doc:"Last request the key made, to the minute (written at most once a minute per key)"`
	RolledFrom        *string    `json:"rolledFrom" doc:"The key this one was rolled from (POST /api-keys/{id}/roll)"`
	RolledTo          *string    `json:"rolledTo" doc:"The key this one was rolled into; this key stops at its expiresAt"`

	AccountID  string   `json:"-"`
	Ancestors  []string `json:"-"` // root first, parent last
	SecretHash []byte   `json:"-"`
}

const secretPrefix = "psk_"

// idLen is the length of an identifier with its prefix (key_…, acct_…).
const (
	keyIDLen  = len("key_") + 26
	acctIDLen = len("acct_") + 26
	randLen   = 43 // 32 bytes, base64url
)

// NewSecret makes the secret of k: psk_<key id>_<256 random bits>, then the
// account id and the ancestor ids. The ids are not secret (a key's holder may
// know its own chain); they let authentication read the key, its ancestors
// and its account in one batch, and they are checked against the stored
// record, so a secret with edited ids is simply invalid. Only the secret's
// SHA-256 is stored: with 256 bits of entropy a slow hash would add latency
// and no security.
func NewSecret(k *Key) (secret string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("keys: crypto/rand failed: " + err.Error())
	}
	parts := append([]string{secretPrefix + k.ID, base64.RawURLEncoding.EncodeToString(b[:]), k.AccountID}, k.Ancestors...)
	secret = strings.Join(parts, "_")
	h := sha256.Sum256([]byte(secret))
	return secret, h[:]
}

// maxSecretLen bounds what is parsed: a depth-8 key's secret is about 330
// characters.
const maxSecretLen = 512

// Hint is what a secret says about its key: the ids authentication reads.
type Hint struct {
	KeyID, AccountID string
	Ancestors        []string
}

// ParseSecret reads the ids out of a secret; ok is false when it cannot be
// one of ours.
func ParseSecret(secret string) (h Hint, ok bool) {
	h, ok = splitSecret(secret, nil)
	return h, ok && h.valid()
}

// splitSecret is ParseSecret without the check of the ids' alphabet (see
// Hint.valid), appending the ancestors to anc, so that authentication can
// keep them in an array on its own stack.
func splitSecret(secret string, anc []string) (h Hint, ok bool) {
	rest, found := strings.CutPrefix(secret, secretPrefix)
	if !found || len(secret) > maxSecretLen || len(rest) < keyIDLen+1+randLen+1+acctIDLen {
		return Hint{}, false
	}
	h.KeyID = rest[:keyIDLen]
	rest = rest[keyIDLen:]
	if rest[0] != '_' || rest[1+randLen] != '_' {
		return Hint{}, false
	}
	rest = rest[2+randLen:]
	h.AccountID, rest = rest[:acctIDLen], rest[acctIDLen:]
	for rest != "" {
		if rest[0] != '_' || len(rest) < 1+keyIDLen || len(anc) == MaxDepth-1 {
			return Hint{}, false
		}
		anc = append(anc, rest[1:1+keyIDLen])
		rest = rest[1+keyIDLen:]
	}
	if len(anc) > 0 {
		h.Ancestors = anc
	}
	return h, true
}

// valid reports whether every id of h is well formed.
func (h Hint) valid() bool {
	if !ids.Valid("key", h.KeyID) || !ids.Valid("acct", h.AccountID) {
		return false
	}
	for _, a := range h.Ancestors {
		if !ids.Valid("key", a) {
			return false
		}
	}
	return true
}

// Matches compares the secret's hash with the stored one in constant time.
// The secret is hashed from a copy on the stack: converting a string of
// more than 32 bytes to []byte is an allocation per request.
func (k *Key) Matches(secret string) bool {
	if len(secret) > maxSecretLen {
		return false
	}
	var buf [maxSecretLen]byte
	h := sha256.Sum256(buf[:copy(buf[:], secret)])
	return subtle.ConstantTimeCompare(h[:], k.SecretHash) == 1
}

// PrefixOf is the part of a secret shown in listings.
func PrefixOf(secret string) string { return secret[:len(secretPrefix)+12] }

// NotYetValid reports whether the key's notBefore is still ahead. A child
// never starts before its ancestors, but every key of a chain is checked
// anyway (see valid).
func (k *Key) NotYetValid(now time.Time) bool { return k.NotBefore != nil && now.Before(*k.NotBefore) }

// Expired reports whether the key's own expiry has passed. A child is
// created expiring no later than its ancestors, but a roll shortens a key's
// expiry below its existing descendants', so every key of a chain is checked
// (see valid and effectiveStatus).
func (k *Key) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }

// HasScope reports whether the key holds scope s.
func (k *Key) HasScope(s string) bool { return slices.Contains(k.Scopes, s) }

// AllowsService reports whether service access lets the key reach svc.
func (k *Key) AllowsService(svc string) bool {
	return k.AllowedServices == nil || slices.Contains(k.AllowedServices, svc)
}

// AllowsOperation reports whether operation access lets the key call op.
func (k *Key) AllowsOperation(op string) bool {
	return k.AllowedOperations == nil || slices.Contains(k.AllowedOperations, op)
}

// Path is the key's position in its tree: ancestor ids and its own, joined.
func (k *Key) Path() string {
	return strings.Join(append(append([]string{}, k.Ancestors...), k.ID), "/")
}
