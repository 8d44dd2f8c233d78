package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"platformapi/shared/topup"
	"platformapi/shared/x402"
)

// Signer signs the payment the server asks for: it authorises exactly
// requirements.Amount of requirements.Asset to requirements.PayTo. A wallet
// or KMS-backed signer implements it; for local development wrap
// x402.Sign with an ecdsa key (see LocalSigner).
type Signer func(ctx context.Context, requirements x402.PaymentRequirements) (x402.PaymentPayload, error)

// LocalSigner signs with sign, e.g. func(r) { return x402.Sign(key, r, x402.SignOptions{}) }.
func LocalSigner(sign func(x402.PaymentRequirements) (x402.PaymentPayload, error)) Signer {
	return func(_ context.Context, r x402.PaymentRequirements) (x402.PaymentPayload, error) { return sign(r) }
}

// TopUpReceipt is a settled credit purchase.
type TopUpReceipt struct {
	topup.TopUpResult
	// Settlement is the facilitator's answer (Payment-Response).
	Settlement x402.SettleResponse
}

// TopUp buys credits with x402: it asks, receives the 402 challenge, has
// signer sign the requirements and sends the payment under the same
// Idempotency-Key, so a retried top-up credits at most once. amountUSD is a
// decimal string, 5 to 500 with at most two decimals ("12.34"). A refused
// payment is Result.Error (402 payment_required, its Payment-Required in
// Error.Header); a signer failure is a Go error.
func (c *Client) TopUp(ctx context.Context, amountUSD string, signer Signer, opts ...CallOption) (Result[TopUpReceipt], error) {
	body := map[string]json.Number{"amountUsd": json.Number(amountUSD)}
	cl := c.newCall("credits.x402.topUp", nil, opts)
	if err := cl.jsonBody(body); err != nil {
		return Result[TopUpReceipt]{}, err
	}
	first, err := do[topup.TopUpResult](ctx, c, cl)
	if err != nil || first.OK || first.Status != http.StatusPaymentRequired {
		return receipt(first), err
	}
	required, err := x402.DecodePaymentRequired(first.Error.Header.Get(x402.HeaderPaymentRequired))
	if err != nil {
		return receipt(first), fmt.Errorf("platform sdk: top-up challenge: %w", err)
	}
	var req *x402.PaymentRequirements
	for i := range required.Accepts {
		if required.Accepts[i].Scheme == "exact" {
			req = &required.Accepts[i]
			break
		}
	}
	if req == nil {
		return receipt(first), errors.New("platform sdk: top-up challenge offers no exact-scheme payment")
	}
	payload, err := signer(ctx, *req)
	if err != nil {
		return receipt(first), fmt.Errorf("platform sdk: sign top-up payment: %w", err)
	}
	hdr, err := x402.EncodeHeader(payload)
	if err != nil {
		return receipt(first), err
	}
	cl.header.Set(x402.HeaderPaymentSignature, hdr)
	paid, err := do[topup.TopUpResult](ctx, c, cl)
	out := receipt(paid)
	out.Attempts += first.Attempts
	if err == nil && paid.OK {
		if v := paid.Header.Get(x402.HeaderPaymentResponse); v != "" {
			if out.Value.Settlement, err = x402.DecodeSettleResponse(v); err != nil {
				err = fmt.Errorf("platform sdk: top-up Payment-Response: %w", err)
			}
		}
	}
	return out, err
}

func receipt(r Result[topup.TopUpResult]) Result[TopUpReceipt] {
	return Result[TopUpReceipt]{OK: r.OK, Value: TopUpReceipt{TopUpResult: r.Value}, Error: r.Error, Status: r.Status, RequestID: r.RequestID,
		Replayed: r.Replayed, IdempotencyKey: r.IdempotencyKey, Attempts: r.Attempts, Header: r.Header}
}
