package platform

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The x402 headers of a top-up carry base64 JSON that the OpenAPI document
// does not describe (they are headers, not bodies), so their types are
// written here, as x402 v2 defines them.

// ResourceInfo names what a payment pays for.
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequired is the Payment-Required header of a 402: what the server
// accepts as payment.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    ResourceInfo          `json:"resource"`
	Accepts     []PaymentRequirements `json:"accepts"`
}

// PaymentRequirements is one way to pay: Amount (base units of Asset, a
// decimal string) to PayTo on Network ("eip155:<chainId>"), authorised
// within MaxTimeoutSeconds. Extra is the EIP-712 domain name and version of
// Asset's token contract.
type PaymentRequirements struct {
	Scheme            string       `json:"scheme"`
	Network           string       `json:"network"`
	Amount            string       `json:"amount"`
	Asset             string       `json:"asset"`
	PayTo             string       `json:"payTo"`
	MaxTimeoutSeconds int64        `json:"maxTimeoutSeconds"`
	Extra             PaymentExtra `json:"extra"`
}

// PaymentExtra is the token's EIP-712 domain name and version.
type PaymentExtra struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ChainID is the chain of Network ("eip155:<chainId>"), the EIP-712
// domain's chainId.
func (r PaymentRequirements) ChainID() (uint64, error) {
	ref, ok := strings.CutPrefix(r.Network, "eip155:")
	id, err := strconv.ParseUint(ref, 10, 64)
	if !ok || err != nil || id == 0 {
		return 0, fmt.Errorf("platform sdk: network %q is not eip155:<chainId>", r.Network)
	}
	return id, nil
}

// PaymentAuthorization is an EIP-3009 transferWithAuthorization: addresses
// as 0x hex, Value and the validity window (unix seconds) as decimal
// strings, Nonce as 32 bytes of 0x hex.
type PaymentAuthorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// ExactPayload is what a Signer returns: the authorization and its EIP-712
// signature (65 bytes, 0x hex).
type ExactPayload struct {
	Signature     string               `json:"signature"`
	Authorization PaymentAuthorization `json:"authorization"`
}

// PaymentPayload is the Payment-Signature header TopUp sends.
type PaymentPayload struct {
	X402Version int                 `json:"x402Version"`
	Resource    *ResourceInfo       `json:"resource,omitempty"`
	Accepted    PaymentRequirements `json:"accepted"`
	Payload     ExactPayload        `json:"payload"`
}

// SettleResponse is the Payment-Response header of a paid top-up: the
// facilitator's settlement.
type SettleResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
}

// Signer authorises exactly requirements.Amount of requirements.Asset to
// requirements.PayTo (an EIP-3009 transferWithAuthorization signed as
// EIP-712). The SDK has no Ethereum code, so the caller provides it: a
// wallet, a KMS key, or go-ethereum with a local key (the sdktest module's
// Example_goEthereumSigner shows one).
type Signer interface {
	SignPayment(ctx context.Context, requirements PaymentRequirements) (ExactPayload, error)
}

// SignerFunc is a function used as a Signer.
type SignerFunc func(ctx context.Context, requirements PaymentRequirements) (ExactPayload, error)

// SignPayment calls f.
func (f SignerFunc) SignPayment(ctx context.Context, r PaymentRequirements) (ExactPayload, error) {
	return f(ctx, r)
}

// TopUpReceipt is a settled credit purchase.
type TopUpReceipt struct {
	TopUpResult
	// Settlement is the facilitator's answer (Payment-Response).
	Settlement SettleResponse
}

// TopUp buys credits with x402: it asks, receives the 402 challenge, has
// signer sign the requirements and sends the payment under the same
// Idempotency-Key, so a retried top-up credits at most once. amountUSD is a
// decimal string, 5 to 500 with at most two decimals ("12.34"). A refused
// payment is Result.Error (402 payment_required, its Payment-Required in
// Error.Header); a signer failure is a Go error.
//
// TopUp is written by hand: one call is two exchanges with a signature
// between them, and it answers the settlement header beside the body.
func (c *Client) TopUp(ctx context.Context, amountUSD string, signer Signer, opts ...CallOption) (Result[TopUpReceipt], error) {
	cl := c.newCall("credits.x402.topUp", nil, opts)
	if err := cl.jsonBody(TopUpRequest{AmountUSD: json.Number(amountUSD)}); err != nil {
		return Result[TopUpReceipt]{}, err
	}
	first, err := do[TopUpResult](ctx, c, cl)
	if err != nil || first.OK || first.Status != http.StatusPaymentRequired {
		return receipt(first), err
	}
	var required PaymentRequired
	if err := decodeHeader(first.Error.Header.Get("Payment-Required"), &required); err != nil {
		return receipt(first), fmt.Errorf("platform sdk: top-up challenge: %w", err)
	}
	var req *PaymentRequirements
	for i := range required.Accepts {
		if required.Accepts[i].Scheme == "exact" {
			req = &required.Accepts[i]
			break
		}
	}
	if req == nil {
		return receipt(first), errors.New("platform sdk: top-up challenge offers no exact-scheme payment")
	}
	signed, err := signer.SignPayment(ctx, *req)
	if err != nil {
		return receipt(first), fmt.Errorf("platform sdk: sign top-up payment: %w", err)
	}
	hdr, err := json.Marshal(PaymentPayload{X402Version: required.X402Version, Accepted: *req, Payload: signed})
	if err != nil {
		return receipt(first), fmt.Errorf("platform sdk: encode top-up payment: %w", err)
	}
	cl.header.Set("Payment-Signature", base64.StdEncoding.EncodeToString(hdr))
	paid, err := do[TopUpResult](ctx, c, cl)
	out := receipt(paid)
	out.Attempts += first.Attempts
	if err == nil && paid.OK {
		if v := paid.Header.Get("Payment-Response"); v != "" {
			if err = decodeHeader(v, &out.Value.Settlement); err != nil {
				err = fmt.Errorf("platform sdk: top-up Payment-Response: %w", err)
			}
		}
	}
	return out, err
}

// decodeHeader decodes an x402 header: base64 (padded or not) of JSON.
func decodeHeader(value string, v any) error {
	enc := base64.StdEncoding
	if len(value)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	raw, err := enc.DecodeString(value)
	if err != nil {
		return fmt.Errorf("base64: %w", err)
	}
	return json.Unmarshal(raw, v)
}

func receipt(r Result[TopUpResult]) Result[TopUpReceipt] {
	return Result[TopUpReceipt]{OK: r.OK, Value: TopUpReceipt{TopUpResult: r.Value}, Error: r.Error, Status: r.Status, RequestID: r.RequestID,
		Replayed: r.Replayed, IdempotencyKey: r.IdempotencyKey, Attempts: r.Attempts, Header: r.Header}
}
