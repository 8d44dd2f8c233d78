// Package envelopetest is the conformance suite of the envelope port:
// localkey and kmsenvelope must both refuse, with envelope.ErrDecrypt, any
// sealed secret that was altered or moved to other associated data. It must
// test the port only, never an adapter's format.
package envelopetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"platformapi/shared/adapters/envelope"
)

// RunConformance runs every rule against sealers made by newSealer, which
// registers its own cleanup.
func RunConformance(t *testing.T, newSealer func(t *testing.T) envelope.Sealer) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) { r.run(t, newSealer(t)) })
	}
}

type rule struct {
	name string
	run  func(t *testing.T, s envelope.Sealer)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func seal(t *testing.T, s envelope.Sealer, plain, ad []byte) []byte {
	t.Helper()
	sealed, err := s.Seal(ctx(t), plain, ad)
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

func wantDecryptError(t *testing.T, s envelope.Sealer, sealed, ad []byte, what string) {
	t.Helper()
	if plain, err := s.Open(ctx(t), sealed, ad); !errors.Is(err, envelope.ErrDecrypt) {
		t.Fatalf("%s: Open = %q, %v; want ErrDecrypt", what, plain, err)
	}
}

var ad = []byte("conn_123|acct_9")

var rules = []rule{
	{"SealedSecretOpensWithItsAssociatedData", func(t *testing.T, s envelope.Sealer) {
		for _, plain := range [][]byte{[]byte("postgres://user:pw@host/db"), {}, bytes.Repeat([]byte{0, 1, 2, 0xff}, 16<<10)} {
			sealed := seal(t, s, plain, ad)
			got, err := s.Open(ctx(t), sealed, ad)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("Open = %d bytes, %v; want the %d sealed bytes", len(got), err, len(plain))
			}
		}
	}},
	{"EmptyAssociatedDataWorksToo", func(t *testing.T, s envelope.Sealer) {
		sealed := seal(t, s, []byte("x"), nil)
		if got, err := s.Open(ctx(t), sealed, nil); err != nil || string(got) != "x" {
			t.Fatalf("Open = %q, %v", got, err)
		}
		wantDecryptError(t, s, sealed, []byte("now bound"), "associated data added")
	}},
	{"OtherAssociatedDataIsRefused", func(t *testing.T, s envelope.Sealer) {
		sealed := seal(t, s, []byte("secret"), ad)
		wantDecryptError(t, s, sealed, []byte("conn_124|acct_9"), "another record's associated data")
		wantDecryptError(t, s, sealed, nil, "no associated data")
	}},
	{"TamperingAnywhereIsRefused", func(t *testing.T, s envelope.Sealer) {
		sealed := seal(t, s, []byte("secret"), ad)
		step := max(1, len(sealed)/40) // about 40 positions, the header and the tag included
		for i := 0; i < len(sealed); i += step {
			bad := bytes.Clone(sealed)
			bad[i] ^= 0x01
			wantDecryptError(t, s, bad, ad, "bit flipped")
		}
		last := bytes.Clone(sealed)
		last[len(last)-1] ^= 0x80
		wantDecryptError(t, s, last, ad, "last byte flipped")
		wantDecryptError(t, s, sealed[:len(sealed)-1], ad, "truncated")
		wantDecryptError(t, s, append(bytes.Clone(sealed), 0), ad, "extended")
		wantDecryptError(t, s, nil, ad, "empty")
	}},
	{"TwoSealsOfOneSecretDiffer", func(t *testing.T, s envelope.Sealer) {
		a, b := seal(t, s, []byte("same"), ad), seal(t, s, []byte("same"), ad)
		if bytes.Equal(a, b) {
			t.Fatal("two seals of the same secret are identical")
		}
	}},
	{"SealedFormHidesThePlaintext", func(t *testing.T, s envelope.Sealer) {
		plain := []byte("a-very-recognisable-secret-value")
		if sealed := seal(t, s, plain, ad); bytes.Contains(sealed, plain) {
			t.Fatal("sealed form contains the plaintext")
		}
	}},
}
