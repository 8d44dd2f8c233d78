package x402

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Domain is the EIP-712 domain of an EIP-3009 token contract.
type Domain struct {
	Name              string
	Version           string
	ChainID           uint64
	VerifyingContract common.Address
}

var (
	domainTypeHash = crypto.Keccak256Hash([]byte(
		"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	transferTypeHash = crypto.Keccak256Hash([]byte(
		"TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
)

// DomainOf returns the domain the payer must sign under for req: the asset
// contract on the requirement's chain, named by req.Extra. It is always built
// from the server's requirements, never from what the client claims.
func DomainOf(req PaymentRequirements) (Domain, error) {
	chainID, err := ParseChainID(req.Network)
	if err != nil {
		return Domain{}, fmt.Errorf("%w: %v", ErrInvalidRequirements, err)
	}
	asset, err := parseAddress(req.Asset)
	if err != nil {
		return Domain{}, fmt.Errorf("%w: asset: %v", ErrInvalidRequirements, err)
	}
	if req.Extra.Name == "" || req.Extra.Version == "" {
		return Domain{}, fmt.Errorf("%w: extra.name and extra.version are required", ErrInvalidRequirements)
	}
	return Domain{Name: req.Extra.Name, Version: req.Extra.Version, ChainID: chainID, VerifyingContract: asset}, nil
}

// Separator returns the EIP-712 domain separator.
func (d Domain) Separator() common.Hash {
	return crypto.Keccak256Hash(
		domainTypeHash[:],
		crypto.Keccak256([]byte(d.Name)),
		crypto.Keccak256([]byte(d.Version)),
		word(new(big.Int).SetUint64(d.ChainID)),
		common.LeftPadBytes(d.VerifyingContract[:], 32),
	)
}

// Digest returns the EIP-712 hash the payer signs:
// keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(authorization)).
func (t TransferAuthorization) Digest(d Domain) common.Hash {
	structHash := crypto.Keccak256(
		transferTypeHash[:],
		common.LeftPadBytes(t.From[:], 32),
		common.LeftPadBytes(t.To[:], 32),
		word(t.Value),
		word(t.ValidAfter),
		word(t.ValidBefore),
		t.Nonce[:],
	)
	sep := d.Separator()
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], structHash)
}

// word encodes a uint256 as a 32-byte big-endian word. Callers only pass
// values parsed or built as uint256.
func word(n *big.Int) []byte {
	var w [32]byte
	n.FillBytes(w[:])
	return w[:]
}
