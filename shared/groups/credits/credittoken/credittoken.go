// Package credittoken mints and verifies first-key credit tokens: signed,
// expiring vouchers for N credits. A token proves only that the operator
// issued it; single use is enforced where it is redeemed (a conditional write
// on the token's id), never here.
package credittoken

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"platformapi/shared/base/ids"
)

// ErrInvalid covers forged, malformed and expired tokens alike, so callers
// cannot tell an attacker which check failed.
var ErrInvalid = errors.New("credittoken: invalid token")

// ErrOtherSigner is a token whose signature does not verify and whose
// payload names another signer than this one: most likely a real token
// minted for another deployment (another data directory's key), which
// the one who holds it can tell from the payload alone. It is ErrInvalid
// too (errors.Is): the token is refused all the same.
var ErrOtherSigner error = otherSigner{}

type otherSigner struct{}

func (otherSigner) Error() string        { return "credittoken: minted by another signer" }
func (otherSigner) Is(target error) bool { return target == ErrInvalid }

const prefix = "ct1."

// maxLen bounds what Verify will even parse.
const maxLen = 512

// Claims is what a token carries.
type Claims struct {
	ID           string `json:"jti"`
	CreditsMicro int64  `json:"credits"`
	IssuedAt     int64  `json:"iat"`
	ExpiresAt    int64  `json:"exp"`
	// Signer names the key that signed the token (KeyID); tokens minted
	// before it was written have none.
	Signer string `json:"kid,omitempty"`
}

// Signer mints and verifies tokens with one Ed25519 key.
type Signer struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	kid  string
}

// KeyID names the signer's key: the first 8 bytes of the SHA-256 of its
// public key, in hex. It tells keys apart and reveals nothing of the seed.
func (s *Signer) KeyID() string { return s.kid }

// NewSigner builds a signer from a 32-byte seed.
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("credittoken: seed must be %d bytes, got %d", ed25519.SeedSize, len(seed))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	sum := sha256.Sum256(pub)
	return &Signer{priv: priv, pub: pub, kid: hex.EncodeToString(sum[:8])}, nil
}

// LoadOrCreateSeed reads the seed file, creating it (0600, exclusively, so
// two processes starting at once agree on one key) on first use.
func LoadOrCreateSeed(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return decodeSeed(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreateSeed(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(seed) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return seed, f.Close()
}

func decodeSeed(b []byte) ([]byte, error) {
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("credittoken: seed must be 32 bytes, base64-encoded")
	}
	return seed, nil
}

// DecodeSeed parses a base64 seed as stored in a file or a secret.
func DecodeSeed(s string) ([]byte, error) { return decodeSeed([]byte(s)) }

// Mint issues a token worth creditsMicro, valid for ttl.
func (s *Signer) Mint(creditsMicro int64, now time.Time, ttl time.Duration) (string, error) {
	if creditsMicro <= 0 {
		return "", errors.New("credittoken: credits must be positive")
	}
	c := Claims{ID: ids.New("ctk", now), CreditsMicro: creditsMicro, IssuedAt: now.Unix(), ExpiresAt: now.Add(ttl).Unix(), Signer: s.kid}
	body, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	sig := ed25519.Sign(s.priv, []byte(prefix+payload))
	return prefix + payload + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// wellFormed reports whether token holds only base64url characters and
// dots: the base64 decoder skips CR and LF even when strict, which would
// give a token a second spelling.
func wellFormed(token string) bool {
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Verify checks the signature and expiry and returns the claims.
func (s *Signer) Verify(token string, now time.Time) (Claims, error) {
	if len(token) > maxLen || !strings.HasPrefix(token, prefix) || !wellFormed(token) {
		return Claims{}, ErrInvalid
	}
	payload, sigText, ok := strings.Cut(strings.TrimPrefix(token, prefix), ".")
	if !ok {
		return Claims{}, ErrInvalid
	}
	// Strict: the spare bits of the last character must be zero, so a token
	// has exactly one spelling (found by FuzzVerify).
	sig, err := base64.RawURLEncoding.Strict().DecodeString(sigText)
	if err != nil || !ed25519.Verify(s.pub, []byte(prefix+payload), sig) {
		if s.namesOtherSigner(payload) {
			return Claims{}, ErrOtherSigner
		}
		return Claims{}, ErrInvalid
	}
	body, err := base64.RawURLEncoding.Strict().DecodeString(payload)
	if err != nil {
		return Claims{}, ErrInvalid
	}
	var c Claims
	if err := json.Unmarshal(body, &c); err != nil || c.ID == "" || c.CreditsMicro <= 0 {
		return Claims{}, ErrInvalid
	}
	if now.Unix() >= c.ExpiresAt {
		return Claims{}, ErrInvalid
	}
	return c, nil
}

// namesOtherSigner reports whether an unverified payload names a signer
// other than this one. It decides only which refusal to give.
func (s *Signer) namesOtherSigner(payload string) bool {
	body, err := base64.RawURLEncoding.Strict().DecodeString(payload)
	if err != nil {
		return false
	}
	var c Claims
	return json.Unmarshal(body, &c) == nil && c.Signer != "" && c.Signer != s.kid
}
