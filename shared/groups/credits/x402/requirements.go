package x402

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Terms is the typed form of payable exact-EVM requirements.
type Terms struct {
	Domain     Domain // the asset contract's EIP-712 domain
	Amount     *big.Int
	PayTo      common.Address
	MaxTimeout time.Duration
}

// Terms validates the requirements and returns their typed form. Servers
// should call it once on their configured requirements at startup; every
// failure wraps ErrInvalidRequirements.
func (r PaymentRequirements) Terms() (Terms, error) {
	if r.Scheme != SchemeExact {
		return Terms{}, fmt.Errorf("%w: scheme %q, want %q", ErrInvalidRequirements, r.Scheme, SchemeExact)
	}
	dom, err := DomainOf(r)
	if err != nil {
		return Terms{}, err
	}
	amount, err := parseUint256(r.Amount)
	if err != nil || hasHexPrefix(r.Amount) || amount.Sign() == 0 {
		return Terms{}, fmt.Errorf("%w: amount %q must be a positive decimal integer", ErrInvalidRequirements, r.Amount)
	}
	payTo, err := parseAddress(r.PayTo)
	if err != nil {
		return Terms{}, fmt.Errorf("%w: payTo: %v", ErrInvalidRequirements, err)
	}
	if r.MaxTimeoutSeconds <= 0 || r.MaxTimeoutSeconds > 86400 {
		return Terms{}, fmt.Errorf("%w: maxTimeoutSeconds %d must be within 1..86400", ErrInvalidRequirements, r.MaxTimeoutSeconds)
	}
	return Terms{
		Domain:     dom,
		Amount:     amount,
		PayTo:      payTo,
		MaxTimeout: time.Duration(r.MaxTimeoutSeconds) * time.Second,
	}, nil
}
