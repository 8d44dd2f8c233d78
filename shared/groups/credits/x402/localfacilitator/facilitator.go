package localfacilitator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits/x402"
)

// DefaultClockSkew is how far ahead of this facilitator's clock a payer's
// clock may run.
const DefaultClockSkew = 30 * time.Second

// Config tunes a Facilitator. Zero values pick the defaults.
type Config struct {
	Now       func() time.Time // default time.Now
	ClockSkew time.Duration    // default DefaultClockSkew
}

// Facilitator is the development-only x402.Facilitator. It is safe for
// concurrent use; settlement is serialised by the store's conditional write.
type Facilitator struct {
	st   store.Store
	now  func() time.Time
	skew time.Duration
}

var _ x402.Facilitator = (*Facilitator)(nil)

// New returns a local facilitator that records used nonces in st.
func New(st store.Store, cfg Config) *Facilitator {
	f := &Facilitator{st: st, now: cfg.Now, skew: cfg.ClockSkew}
	if f.now == nil {
		f.now = time.Now
	}
	if f.skew <= 0 {
		f.skew = DefaultClockSkew
	}
	return f
}

// Verify checks the payment and that its nonce is unused, consuming nothing.
func (f *Facilitator) Verify(ctx context.Context, p x402.PaymentPayload, req x402.PaymentRequirements) (x402.VerifyResponse, error) {
	v, err := f.verify(ctx, p, req)
	if err != nil {
		return x402.VerifyResponse{}, err
	}
	return x402.VerifyResponse{IsValid: v.reason == "", InvalidReason: v.reason, Payer: payerHex(v)}, nil
}

// Settle re-verifies the payment, then records its nonce with a write that
// succeeds only if no record exists, so of any number of settles of one
// authorization, concurrent or not, exactly one succeeds.
func (f *Facilitator) Settle(ctx context.Context, p x402.PaymentPayload, req x402.PaymentRequirements) (x402.SettleResponse, error) {
	v, err := f.verify(ctx, p, req)
	if err != nil {
		return x402.SettleResponse{}, err
	}
	if v.reason == "" {
		tx := pseudoTransaction(v.digest)
		err = f.st.Put(ctx, nonceRecord(v, req.Network, tx, f.now(), f.skew), store.NotExists())
		switch {
		case errors.Is(err, store.ErrConditionFailed):
			v.reason = x402.ReasonNonceUsed
		case err != nil:
			return x402.SettleResponse{}, fmt.Errorf("localfacilitator: record nonce: %w", err)
		default:
			return x402.SettleResponse{Success: true, Payer: v.payer.Hex(), Transaction: tx, Network: req.Network}, nil
		}
	}
	return x402.SettleResponse{ErrorReason: v.reason, Payer: payerHex(v), Network: req.Network}, nil
}

// verify runs the offline checks and then the nonce lookup. An error means
// the requirements are unusable or the store failed.
func (f *Facilitator) verify(ctx context.Context, p x402.PaymentPayload, req x402.PaymentRequirements) (verdict, error) {
	terms, err := req.Terms()
	if err != nil {
		return verdict{}, err
	}
	v := checkPayment(p.Upgrade(req), req, terms, f.now(), f.skew)
	if v.reason != "" {
		return v, nil
	}
	v.key = nonceKey(terms, v.auth)
	_, err = f.st.Get(ctx, v.key)
	switch {
	case err == nil:
		v.reason = x402.ReasonNonceUsed
	case !errors.Is(err, store.ErrNotFound):
		return verdict{}, fmt.Errorf("localfacilitator: look up nonce: %w", err)
	}
	return v, nil
}

// payerHex reports the payer only when the signature proved it.
func payerHex(v verdict) string {
	if v.payer == (common.Address{}) {
		return ""
	}
	return v.payer.Hex()
}
