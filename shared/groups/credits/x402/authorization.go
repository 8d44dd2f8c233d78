package x402

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// TransferAuthorization is the typed EIP-3009 TransferWithAuthorization
// message: what the payer signs and what the token contract executes.
type TransferAuthorization struct {
	From        common.Address
	To          common.Address
	Value       *big.Int
	ValidAfter  *big.Int // unix seconds; the transfer is valid strictly after it
	ValidBefore *big.Int // unix seconds; the transfer is valid strictly before it
	Nonce       [32]byte // chosen by the payer; the contract accepts each (from, nonce) once
}

// Parse validates the wire authorization and returns its typed form.
func (a Authorization) Parse() (TransferAuthorization, error) {
	var t TransferAuthorization
	var err error
	if t.From, err = parseAddress(a.From); err != nil {
		return t, fmt.Errorf("authorization.from: %w", err)
	}
	if t.To, err = parseAddress(a.To); err != nil {
		return t, fmt.Errorf("authorization.to: %w", err)
	}
	if t.Value, err = parseUint256(a.Value); err != nil {
		return t, fmt.Errorf("authorization.value: %w", err)
	}
	if t.ValidAfter, err = parseUint256(a.ValidAfter); err != nil {
		return t, fmt.Errorf("authorization.validAfter: %w", err)
	}
	if t.ValidBefore, err = parseUint256(a.ValidBefore); err != nil {
		return t, fmt.Errorf("authorization.validBefore: %w", err)
	}
	if t.Nonce, err = parseBytes32(a.Nonce); err != nil {
		return t, fmt.Errorf("authorization.nonce: %w", err)
	}
	return t, nil
}

// Wire returns the authorization in its canonical wire form: checksummed
// addresses, decimal numbers and a 0x nonce of 64 hex digits.
func (t TransferAuthorization) Wire() Authorization {
	return Authorization{
		From:        t.From.Hex(),
		To:          t.To.Hex(),
		Value:       t.Value.String(),
		ValidAfter:  t.ValidAfter.String(),
		ValidBefore: t.ValidBefore.String(),
		Nonce:       hexutil.Encode(t.Nonce[:]),
	}
}
