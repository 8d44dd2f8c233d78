package credittoken

import (
	"crypto/rand"
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
		"expired":        {good, now.Add(2 * time.Hour)},
		"foreign signer": {foreign, now},
		"tampered":       {tampered, now},
		"garbage":        {"ct1.nope", now},
		"empty":          {"", now},
		"oversized":      {prefix + strings.Repeat("A", 600), now},
	} {
		if _, err := s.Verify(tc.tok, tc.at); err != ErrInvalid {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
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
