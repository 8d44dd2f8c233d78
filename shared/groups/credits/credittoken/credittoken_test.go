package credittoken

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newSigner(t *testing.T) *Signer {
	t.Helper()
	seed := make([]byte, 32)
	rand.Read(seed)
	s, err := NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMintedTokenVerifiesWithItsCredits(t *testing.T) {
	s := newSigner(t)
	now := time.Now()
	tok, err := s.Mint(5_000_000, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Verify(tok, now)
	if err != nil {
		t.Fatal(err)
	}
	if c.CreditsMicro != 5_000_000 || c.ID == "" {
		t.Fatalf("claims = %+v", c)
	}
}

func TestForgedExpiredAndForeignTokensAreInvalid(t *testing.T) {
	s, other := newSigner(t), newSigner(t)
	now := time.Now()
	good, _ := s.Mint(1_000_000, now, time.Hour)
	foreign, _ := other.Mint(1_000_000, now, time.Hour)
	payload, sig, _ := strings.Cut(strings.TrimPrefix(good, prefix), ".")
	tampered := prefix + payload[:len(payload)-2] + "AA." + sig
	for name, tc := range map[string]struct {
		tok string
		at  time.Time
	}{
		"expired":   {good, now.Add(2 * time.Hour)},
		"tampered":  {tampered, now},
		"garbage":   {"ct1.nope", now},
		"empty":     {"", now},
		"oversized": {prefix + strings.Repeat("A", 600), now},
	} {
		if _, err := s.Verify(tc.tok, tc.at); err != ErrInvalid {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := s.Verify(foreign, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("foreign signer: err = %v, want ErrInvalid", err)
	}
}

// A real token of another signer (another deployment's key) is refused,
// and says so; a token that names this signer but fails its signature, or
// names none, stays a plain ErrInvalid: only the signer's name, which the
// holder can read in the token, decides which refusal.
func TestATokenOfAnotherSignerIsRefusedAsSuch(t *testing.T) {
	s, other := newSigner(t), newSigner(t)
	now := time.Now()
	foreign, _ := other.Mint(1_000_000, now, time.Hour)
	if _, err := s.Verify(foreign, now); err != ErrOtherSigner || !errors.Is(err, ErrInvalid) {
		t.Fatalf("foreign token: err = %v, want ErrOtherSigner (an ErrInvalid)", err)
	}
	// The foreign payload re-signed by nobody but naming this signer.
	payload, sig, _ := strings.Cut(strings.TrimPrefix(foreign, prefix), ".")
	body, _ := base64.RawURLEncoding.DecodeString(payload)
	var c Claims
	_ = json.Unmarshal(body, &c)
	for name, signer := range map[string]string{"this signer": s.KeyID(), "no signer": ""} {
		c.Signer = signer
		raw, _ := json.Marshal(c)
		forged := prefix + base64.RawURLEncoding.EncodeToString(raw) + "." + sig
		if _, err := s.Verify(forged, now); err != ErrInvalid {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if s.KeyID() == other.KeyID() || len(s.KeyID()) != 16 {
		t.Fatalf("key ids %q and %q", s.KeyID(), other.KeyID())
	}
}

func TestSeedFileIsCreatedOnceAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "credit-token.key")
	a, err := LoadOrCreateSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("seed changed between loads")
	}
}
