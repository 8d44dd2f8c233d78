package x402

import (
	"context"
	"errors"
)

// Facilitator verifies and settles payments. It is the port the top-up
// endpoint depends on; adapters decide how money actually moves.
//
// A decision about the payment is returned as a response: IsValid or Success
// false with a reason means "rejected", which the caller answers with 402 and
// credits nothing. An error means no decision could be made (the facilitator
// is unreachable, the store failed, the requirements are misconfigured); the
// caller answers 5xx, also crediting nothing. Only Settle's Success true
// allows crediting.
type Facilitator interface {
	// Verify checks the payment against the requirements without moving
	// money or consuming the authorization.
	Verify(ctx context.Context, p PaymentPayload, req PaymentRequirements) (VerifyResponse, error)
	// Settle re-verifies the payment and executes it. One authorization
	// settles successfully at most once, also under concurrent calls.
	Settle(ctx context.Context, p PaymentPayload, req PaymentRequirements) (SettleResponse, error)
}

// ErrInvalidRequirements reports server-side requirements that cannot be
// paid (bad network, address, amount or domain); it is a configuration
// error, never the payer's fault.
var ErrInvalidRequirements = errors.New("x402: invalid payment requirements")

// Reasons a payment is rejected. The names follow the error codes of the x402
// v2 specification and its reference facilitator where those define one.
const (
	ReasonInvalidVersion = "invalid_x402_version"
	ReasonInvalidScheme  = "invalid_scheme"
	ReasonInvalidNetwork = "invalid_network"
	ReasonInvalidPayload = "invalid_payload"
	ReasonAssetMismatch  = "invalid_exact_evm_asset_mismatch"
	ReasonValueMismatch  = "invalid_exact_evm_payload_authorization_value"
	ReasonRecipient      = "invalid_exact_evm_payload_recipient_mismatch"
	ReasonNotYetValid    = "invalid_exact_evm_payload_authorization_valid_after"
	ReasonExpired        = "invalid_exact_evm_payload_authorization_valid_before"
	ReasonWindowTooLong  = "invalid_exact_evm_payload_authorization_window_too_long"
	ReasonSignature      = "invalid_exact_evm_payload_signature"
	ReasonNonceUsed      = "invalid_exact_evm_nonce_already_used"
	ReasonVerifyFailed   = "unexpected_verify_error"
	ReasonSettleFailed   = "unexpected_settle_error"
)
