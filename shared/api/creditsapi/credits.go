// Package creditsapi is the credits endpoint group (spec 4.1): the balance,
// and credit purchases through x402 (package topup).
package creditsapi

import (
	"context"
	"errors"
	"net/http"

	"platformapi/shared/accounts"
	"platformapi/shared/api"
	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/store"
	"platformapi/shared/topup"
	"platformapi/shared/webhooks"
	"platformapi/shared/x402"
)

// Deps are what the group needs. A nil Facilitator or an empty PayTo makes
// the top-up answer 503.
type Deps struct {
	Store       store.Store
	TopUp       topup.TopUpConfig
	Facilitator x402.Facilitator
}

type handlers struct {
	k     *api.Kernel
	topUp *topup.TopUp
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) {
	h := &handlers{k: k, topUp: topup.NewTopUp(d.Store, k.Now, d.TopUp, d.Facilitator)}
	api.Register(k, "credits.balance.read", http.StatusOK, h.balance)
	api.Register(k, "credits.x402.topUp", http.StatusOK, h.buy)
}

type balanceBody struct {
	Balance float64 `json:"balance" doc:"Credits available to the account"`
	Unit    string  `json:"unit" enum:"credits"`
}

// balance answers from the account item read with the key chain: a
// strongly consistent read made by this very request.
func (h *handlers) balance(ctx context.Context, _ *struct{}) (*api.Body[balanceBody], error) {
	micro := api.PrincipalFrom(ctx).Account.Int(accounts.AttrBalance)
	return api.Reply(balanceBody{Balance: float64(micro) / catalog.MicroPerCredit, Unit: "credits"}), nil
}

type topUpInput struct {
	PaymentSignature string `header:"Payment-Signature" doc:"x402 v2: base64 JSON PaymentPayload signed for the challenge's requirements, sent on the retry with the same Idempotency-Key"`
	XPayment         string `header:"X-PAYMENT" doc:"Legacy x402 header carrying the same payload"`
	X402Version      string `header:"X402-Version" doc:"Optional protocol-version hint"`
	Body             topup.TopUpRequest
}

type topUpOutput struct {
	PaymentResponse string `header:"Payment-Response" doc:"base64 JSON x402 SettleResponse"`
	Receipt         string `header:"X-Service-Paid-Agent-Receipt" doc:"The credit purchase receipt id"`
	Body            topup.TopUpResult
}

func (h *handlers) buy(ctx context.Context, in *topUpInput) (*topUpOutput, error) {
	if !h.topUp.Configured() {
		return nil, apierr.New(apierr.ServiceUnavailable, "Credit purchases are not configured on this deployment (X402_PAY_TO and a facilitator).").WithHeader("Retry-After", "3600")
	}
	hdr := http.Header{}
	for k, v := range map[string]string{x402.HeaderPaymentSignature: in.PaymentSignature, x402.HeaderLegacyPayment: in.XPayment, x402.HeaderVersion: in.X402Version} {
		if v != "" {
			hdr.Set(k, v)
		}
	}
	p := api.PrincipalFrom(ctx)
	var payment *x402.PaymentPayload
	var err error
	var res *topup.TopUpResult
	var settled *x402.SettleResponse
	if pay, ok, perr := x402.PaymentFromHeaders(hdr); perr != nil {
		// A payment that cannot be decoded is a rejected payment, answered
		// with a fresh challenge and never stored, so the same key can
		// still complete the purchase.
		err = h.topUp.Challenge(p.URL, in.Body, "malformed payment header: "+perr.Error())
	} else {
		if ok {
			payment = &pay
		}
		res, settled, err = h.topUp.Buy(ctx, p.Key().AccountID, p.URL, in.Body, payment)
	}
	var pe *topup.PaymentError
	if errors.As(err, &pe) {
		return nil, apierr.New(apierr.PaymentRequired, "Payment required: %s. Sign the requirements in Payment-Required and retry with Payment-Signature and the same Idempotency-Key.", pe.Reason).
			WithHeader(x402.HeaderPaymentRequired, pe.Required)
	}
	if err != nil {
		return nil, err
	}
	receipt, err := x402.EncodeHeader(settled)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, webhooks.EventCreditsToppedUp, res)
	return &topUpOutput{PaymentResponse: receipt, Receipt: res.ReceiptID, Body: *res}, nil
}
