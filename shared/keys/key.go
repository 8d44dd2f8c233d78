// Package keys holds API keys: their record, secrets, the delegation rules
// that keep every child narrower than all its ancestors (spec 2.1, 5.5), and
// their persistence on the item-store port. It never sees HTTP.
package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"time"

	"platformapi/shared/ids"
	"platformapi/shared/limits"
)

// MaxDepth is the deepest delegation chain (spec 5.5 rule 8).
const MaxDepth = 8

// Key is an API key's record as clients see it (CONTRACT "Shapes"), plus the
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

	AccountID  string   `json:"-"`
	Ancestors  []string `json:"-"` // root first, parent last
	SecretHash []byte   `json:"-"`
}

const secretPrefix = "psk_"

// NewSecret makes a secret for key id: the id (so a lookup is one read by
// key) and 256 random bits. Only its SHA-256 is stored; with 256 bits of
// entropy a slow hash would add latency and no security.
func NewSecret(id string) (secret string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("keys: crypto/rand failed: " + err.Error())
	}
	secret = secretPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(secret))
	return secret, h[:]
}

// ParseSecret extracts the key id from a secret; ok is false when the secret
// cannot be one of ours.
func ParseSecret(secret string) (id string, ok bool) {
	const idLen = len("key_") + 26
	rest, found := strings.CutPrefix(secret, secretPrefix)
	if !found || len(secret) > 200 || len(rest) <= idLen || rest[idLen] != '_' {
		return "", false
	}
	id = rest[:idLen]
	return id, ids.Valid("key", id)
}

// Matches compares the secret's hash with the stored one in constant time.
func (k *Key) Matches(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], k.SecretHash) == 1
}

// PrefixOf is the part of a secret shown in listings.
func PrefixOf(secret string) string { return secret[:len(secretPrefix)+12] }

// Expired reports whether the key's own expiry has passed. A child's expiry
// never exceeds its ancestors', so a key's own expiry is its effective one.
func (k *Key) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }

// HasScope reports whether the key holds scope s.
func (k *Key) HasScope(s string) bool {
	for _, x := range k.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// AllowsService reports whether service access lets the key reach svc.
func (k *Key) AllowsService(svc string) bool {
	if k.AllowedServices == nil {
		return true
	}
	for _, s := range k.AllowedServices {
		if s == svc {
			return true
		}
	}
	return false
}

// AllowsOperation reports whether operation access lets the key call op.
func (k *Key) AllowsOperation(op string) bool {
	if k.AllowedOperations == nil {
		return true
	}
	for _, o := range k.AllowedOperations {
		if o == op {
			return true
		}
	}
	return false
}

// Path is the key's position in its tree: ancestor ids and its own, joined.
func (k *Key) Path() string {
	return strings.Join(append(append([]string{}, k.Ancestors...), k.ID), "/")
}
