package x402

import (
	"bytes"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// fuzzKey is a fixed payer key: every fuzz worker must build the same seeds.
func fuzzKey(f *testing.F) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	return k
}

// FuzzDecodePaymentPayload: any header value is decoded or refused as
// malformed without panicking; an accepted exact payment has a parseable
// authorization whose canonical wire form parses to the same values, and
// re-encoding the payload decodes to the same payload.
func FuzzDecodePaymentPayload(f *testing.F) {
	p, err := Sign(fuzzKey(f), testRequirements(), SignOptions{Now: testNow})
	if err != nil {
		f.Fatal(err)
	}
	v, _ := EncodeHeader(p)
	f.Add(v)
	f.Add(strings.TrimRight(v, "="))
	v1, _ := EncodeHeader(map[string]any{"x402Version": 1, "scheme": "exact", "network": "base-sepolia", "payload": p.Payload})
	f.Add(v1)
	f.Add("e30=")
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0")
	f.Fuzz(func(t *testing.T, value string) {
		got, err := DecodePaymentPayload(value)
		if err != nil {
			if !errors.Is(err, ErrMalformedHeader) {
				t.Fatalf("DecodePaymentPayload(%q) = %v, not ErrMalformedHeader", value, err)
			}
			return
		}
		if got.Accepted.Scheme == SchemeExact {
			ta, err := got.Payload.Authorization.Parse()
			if err != nil {
				t.Fatalf("accepted %q with an unparseable authorization: %v", value, err)
			}
			again, err := ta.Wire().Parse()
			if err != nil || !reflect.DeepEqual(again, ta) {
				t.Fatalf("wire form of %+v parses to %+v, %v", ta, again, err)
			}
		}
		if got.X402Version != Version {
			return // v1 re-encodes in v1 shape only through Upgrade
		}
		enc, err := EncodeHeader(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodePaymentPayload(enc)
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("re-encoded payload decodes to %+v, %v; want %+v", back, err, got)
		}
	})
}

// FuzzParseUint256: the integer parser accepts only decimal or 0x-hex
// digits, and what it accepts fits 256 bits and reads back from its
// decimal form.
func FuzzParseUint256(f *testing.F) {
	for _, s := range []string{"0", "00012", "0x1f", "0X", "1_000", "-1", " 1", "115792089237316195423570985008687907853269984665640564039457584007913129639935", "115792089237316195423570985008687907853269984665640564039457584007913129639936"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseUint256(s)
		if err != nil {
			return
		}
		if n.Sign() < 0 || n.BitLen() > 256 {
			t.Fatalf("parseUint256(%q) = %v", s, n)
		}
		ref, ok := new(big.Int).SetString(s, 10)
		if hasHexPrefix(s) {
			ref, ok = new(big.Int).SetString(s[2:], 16)
		}
		if !ok || ref.Cmp(n) != 0 {
			t.Fatalf("parseUint256(%q) = %v, big.Int reads %v", s, n, ref)
		}
		if back, err := parseUint256(n.String()); err != nil || back.Cmp(n) != 0 {
			t.Fatalf("%v does not read back: %v", n, err)
		}
	})
}
