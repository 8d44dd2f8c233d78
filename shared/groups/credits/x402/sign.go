package x402

import (
	"crypto/ecdsa"
	"crypto/rand"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// SignOptions tune Sign. Every zero value picks the usual client behaviour.
type SignOptions struct {
	Now         time.Time     // zero: time.Now()
	ValidAfter  time.Time     // zero: Now minus 10 minutes, tolerating a verifier clock behind ours
	ValidBefore time.Time     // zero: Now plus req.MaxTimeoutSeconds
	Nonce       [32]byte      // zero: 32 random bytes
	Resource    *ResourceInfo // echoed in the payload when set
}

// Sign authorises exactly req.Amount of req.Asset to req.PayTo from key's
// address and returns the PaymentPayload a client sends in Payment-Signature.
// It is the client side of the protocol, used by tests and the CLI.
func Sign(key *ecdsa.PrivateKey, req PaymentRequirements, opts SignOptions) (PaymentPayload, error) {
	terms, err := req.Terms()
	if err != nil {
		return PaymentPayload{}, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	validAfter, validBefore := opts.ValidAfter, opts.ValidBefore
	if validAfter.IsZero() {
		validAfter = now.Add(-10 * time.Minute)
	}
	if validBefore.IsZero() {
		validBefore = now.Add(terms.MaxTimeout)
	}
	nonce := opts.Nonce
	if nonce == ([32]byte{}) {
		if _, err := rand.Read(nonce[:]); err != nil {
			return PaymentPayload{}, fmt.Errorf("x402: nonce: %w", err)
		}
	}
	auth := TransferAuthorization{
		From:        crypto.PubkeyToAddress(key.PublicKey),
		To:          terms.PayTo,
		Value:       terms.Amount,
		ValidAfter:  big.NewInt(validAfter.Unix()),
		ValidBefore: big.NewInt(validBefore.Unix()),
		Nonce:       nonce,
	}
	digest := auth.Digest(terms.Domain)
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return PaymentPayload{}, fmt.Errorf("x402: sign: %w", err)
	}
	sig[64] += 27 // Ethereum convention; RecoverSigner accepts both forms
	return PaymentPayload{
		X402Version: Version,
		Resource:    opts.Resource,
		Accepted:    req,
		Payload:     ExactPayload{Signature: hexutil.Encode(sig), Authorization: auth.Wire()},
	}, nil
}
