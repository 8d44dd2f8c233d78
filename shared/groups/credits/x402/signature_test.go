package x402

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

func TestRecoverSigner(t *testing.T) {
	key := newKey(t)
	want := crypto.PubkeyToAddress(key.PublicKey)
	digest := crypto.Keccak256Hash([]byte("message"))
	sig, err := crypto.Sign(digest[:], key) // v in {0, 1}
	if err != nil {
		t.Fatal(err)
	}
	with := func(edit func(s []byte)) []byte {
		s := append([]byte(nil), sig...)
		edit(s)
		return s
	}
	// The malleable twin (r, n-s, v^1) is a valid ECDSA signature of the
	// same digest by the same key; it must still be refused.
	n := crypto.S256().Params().N
	highS := with(func(s []byte) {
		new(big.Int).Sub(n, new(big.Int).SetBytes(s[32:64])).FillBytes(s[32:64])
		s[64] ^= 1
	})

	tests := []struct {
		name string
		sig  []byte
		ok   bool
	}{
		{"v 0/1 recovers", sig, true},
		{"v 27/28 recovers", with(func(s []byte) { s[64] += 27 }), true},
		{"high s rejected", highS, false},
		{"v 29 rejected", with(func(s []byte) { s[64] = 29 }), false},
		{"zero r rejected", with(func(s []byte) { clear(s[:32]) }), false},
		{"64 bytes rejected", sig[:64], false},
		{"66 bytes rejected", append(append([]byte(nil), sig...), 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RecoverSigner(digest, tc.sig)
			if tc.ok && (err != nil || got != want) {
				t.Fatalf("got %s, %v; want %s", got.Hex(), err, want.Hex())
			}
			if !tc.ok && !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("got %s, %v; want ErrInvalidSignature", got.Hex(), err)
			}
		})
	}
}
