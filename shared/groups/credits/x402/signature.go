package x402

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// ErrInvalidSignature reports a signature that is malformed, malleable or
// unrecoverable.
var ErrInvalidSignature = errors.New("x402: invalid signature")

// RecoverSigner returns the address whose key produced sig over digest. sig
// is 65 bytes r ‖ s ‖ v with v in {27, 28} (or {0, 1}). High-s signatures are
// rejected: for every signature (r, s) the twin (r, n-s) also verifies, and
// accepting both would give one authorization two spellings. Only EOA
// signatures are supported (no EIP-1271 or EIP-6492 smart-wallet forms).
func RecoverSigner(digest common.Hash, sig []byte) (common.Address, error) {
	if len(sig) != 65 {
		return common.Address{}, fmt.Errorf("%w: %d bytes, want 65", ErrInvalidSignature, len(sig))
	}
	v := sig[64]
	if v >= 27 {
		v -= 27
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, fmt.Errorf("%w: r, s or v out of range (or high s)", ErrInvalidSignature)
	}
	norm := make([]byte, 65)
	copy(norm, sig[:64])
	norm[64] = v
	pub, err := crypto.SigToPub(digest[:], norm)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrInvalidSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}
