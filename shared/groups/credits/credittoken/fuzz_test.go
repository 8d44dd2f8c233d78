package credittoken

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

var fuzzNow = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// FuzzVerify: Verify never panics, and the only string that verifies is
// the token minted: an edit of any byte, including the spare bits of the
// last base64 character, is invalid, so a token has one spelling and a
// spent token cannot come back under another.
func FuzzVerify(f *testing.F) {
	s, err := NewSigner(make([]byte, 32))
	if err != nil {
		f.Fatal(err)
	}
	// Mint draws a random id; every fuzz worker must know the same token.
	body, _ := json.Marshal(Claims{ID: "ctk_01KQY1V3X85JSVNFR1KPVP5RRY", CreditsMicro: 5_000_000, IssuedAt: fuzzNow.Unix(), ExpiresAt: fuzzNow.Add(time.Hour).Unix()})
	payload := prefix + base64.RawURLEncoding.EncodeToString(body)
	minted := payload + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.priv, []byte(payload)))
	f.Add(minted)
	f.Add("ct1.")
	f.Add("ct1.e30.")
	f.Add(minted[:len(minted)-1] + "B")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := s.Verify(tok, fuzzNow)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Verify(%q) = %v, want ErrInvalid", tok, err)
			}
			return
		}
		if tok != minted {
			t.Fatalf("%q verifies as %+v but is not the minted token %q", tok, c, minted)
		}
	})
}
