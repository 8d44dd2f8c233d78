package localfacilitator

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/groups/credits/x402"
)

// Each rule of the exact EVM scheme, broken on its own, yields its own reason.
func TestVerify_Rules(t *testing.T) {
	req := testRequirements()
	payer, other := newKey(t), newKey(t)
	signWith := func(edit func(r *x402.PaymentRequirements), opts x402.SignOptions) x402.PaymentPayload {
		r := testRequirements()
		if edit != nil {
			edit(&r)
		}
		return sign(t, payer, r, opts)
	}
	valid := func() x402.PaymentPayload { return signWith(nil, x402.SignOptions{}) }
	tampered := func(edit func(p *x402.PaymentPayload)) x402.PaymentPayload {
		p := valid()
		edit(&p)
		return p
	}
	at := func(d time.Duration) time.Time { return testNow.Add(d) }

	tests := []struct {
		name   string
		p      x402.PaymentPayload
		reason string // "" means valid
	}{
		{"correct payment verifies", valid(), ""},
		{"validAfter within clock skew verifies", signWith(nil, x402.SignOptions{ValidAfter: at(20 * time.Second)}), ""},
		{"legacy v1 payload verifies", legacy(valid(), "base-sepolia"), ""},
		{"wrong amount", signWith(func(r *x402.PaymentRequirements) { r.Amount = "4999999" }, x402.SignOptions{}), x402.ReasonValueMismatch},
		{"wrong payTo", signWith(func(r *x402.PaymentRequirements) { r.PayTo = "0x000000000000000000000000000000000000dEaD" }, x402.SignOptions{}), x402.ReasonRecipient},
		{"wrong asset", signWith(func(r *x402.PaymentRequirements) { r.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }, x402.SignOptions{}), x402.ReasonAssetMismatch},
		{"wrong network", signWith(func(r *x402.PaymentRequirements) { r.Network = "eip155:8453" }, x402.SignOptions{}), x402.ReasonInvalidNetwork},
		{"wrong network in legacy v1 payload", legacy(valid(), "base"), x402.ReasonInvalidNetwork},
		{"wrong scheme", tampered(func(p *x402.PaymentPayload) { p.Accepted.Scheme = "upto" }), x402.ReasonInvalidScheme},
		{"unsupported version", tampered(func(p *x402.PaymentPayload) { p.X402Version = 3 }), x402.ReasonInvalidVersion},
		{"expired window", signWith(nil, x402.SignOptions{ValidAfter: at(-time.Hour), ValidBefore: at(-time.Second)}), x402.ReasonExpired},
		{"window ending now is expired", signWith(nil, x402.SignOptions{ValidBefore: at(0)}), x402.ReasonExpired},
		{"not-yet-valid window", signWith(nil, x402.SignOptions{ValidAfter: at(2 * time.Minute), ValidBefore: at(4 * time.Minute)}), x402.ReasonNotYetValid},
		{"window longer than maxTimeoutSeconds", signWith(nil, x402.SignOptions{ValidBefore: at(time.Hour)}), x402.ReasonWindowTooLong},
		{"signed by another key", signedByOther(t, valid(), other), x402.ReasonSignature},
		{"tampered nonce", tampered(func(p *x402.PaymentPayload) { p.Payload.Authorization.Nonce = hexutil.Encode(make([]byte, 32)) }), x402.ReasonSignature},
		{"tampered validBefore", tampered(func(p *x402.PaymentPayload) { p.Payload.Authorization.ValidBefore = "1760000100" }), x402.ReasonSignature},
		{"malleable high-s signature", tampered(flipS), x402.ReasonSignature},
		{"signed under another domain name", signWith(func(r *x402.PaymentRequirements) { r.Extra.Name = "USD Coin" }, x402.SignOptions{}), x402.ReasonSignature},
		{"signature of wrong length", tampered(func(p *x402.PaymentPayload) { p.Payload.Signature += "00" }), x402.ReasonSignature},
		{"ill-formed authorization", tampered(func(p *x402.PaymentPayload) { p.Payload.Authorization.From = "me" }), x402.ReasonInvalidPayload},
	}
	f := newFacilitator(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.Verify(context.Background(), tc.p, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.IsValid != (tc.reason == "") || got.InvalidReason != tc.reason {
				t.Fatalf("got %+v, want reason %q", got, tc.reason)
			}
			if got.IsValid && got.Payer != crypto.PubkeyToAddress(payer.PublicKey).Hex() {
				t.Fatalf("payer %s", got.Payer)
			}
			if !got.IsValid && got.Payer != "" {
				t.Fatalf("unproven payer %s reported", got.Payer)
			}
		})
	}
}

func TestVerify_InvalidRequirementsIsAnError(t *testing.T) {
	req := testRequirements()
	p := sign(t, newKey(t), req, x402.SignOptions{})
	req.Network = "base-sepolia"
	if _, err := newFacilitator(t).Verify(context.Background(), p, req); !errors.Is(err, x402.ErrInvalidRequirements) {
		t.Fatalf("err %v, want ErrInvalidRequirements", err)
	}
}

// legacy re-shapes a signed v2 payload as a v1 X-PAYMENT payload would
// decode: version 1, only scheme and network chosen.
func legacy(p x402.PaymentPayload, v1Network string) x402.PaymentPayload {
	networks := map[string]string{"base": "eip155:8453", "base-sepolia": "eip155:84532"}
	return x402.PaymentPayload{
		X402Version: 1,
		Accepted:    x402.PaymentRequirements{Scheme: x402.SchemeExact, Network: networks[v1Network]},
		Payload:     p.Payload,
	}
}

// signedByOther claims the payer's address but carries a signature over
// the same authorization by another key.
func signedByOther(t *testing.T, p x402.PaymentPayload, other *ecdsa.PrivateKey) x402.PaymentPayload {
	t.Helper()
	auth, err := p.Payload.Authorization.Parse()
	if err != nil {
		t.Fatal(err)
	}
	terms, _ := testRequirements().Terms()
	digest := auth.Digest(terms.Domain)
	sig, err := crypto.Sign(digest[:], other)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	p.Payload.Signature = hexutil.Encode(sig)
	return p
}

// flipS replaces the signature with its malleable twin (r, n-s, v^1).
func flipS(p *x402.PaymentPayload) {
	sig, _ := p.Payload.SignatureBytes()
	n := crypto.S256().Params().N
	new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:64])).FillBytes(sig[32:64])
	sig[64] ^= 1 // 27 <-> 28
	p.Payload.Signature = hexutil.Encode(sig)
}
