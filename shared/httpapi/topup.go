package httpapi

import (
	"context"
	"errors"
	"net/http"

	"platformapi/shared/apierr"
	"platformapi/shared/credits"
	"platformapi/shared/webhooks"
	"platformapi/shared/x402"
)

type topUpInput struct {
	PaymentSignature string `header:"Payment-Signature" doc:"x402 v2: base64 JSON PaymentPayload signed for the challenge's requirements, sent on the retry with the same Idempotency-Key"`
	XPayment         string `header:"X-PAYMENT" doc:"Legacy x402 header carrying the same payload"`
	X402Version      string `header:"X402-Version" doc:"Optional protocol-version hint"`
	Body             credits.TopUpRequest
}

type topUpOutput struct {
	PaymentResponse string `header:"Payment-Response" doc:"base64 JSON x402 SettleResponse"`
	Receipt         string `header:"X-Service-Paid-Agent-Receipt" doc:"The credit purchase receipt id"`
	Body            credits.TopUpResult
}

func (s *Server) topUpCredits(ctx context.Context, in *topUpInput) (*topUpOutput, error) {
	if !s.topUp.Configured() {
		return nil, apierr.New(apierr.ServiceUnavailable, "Credit purchases are not configured on this deployment (X402_PAY_TO and a facilitator).").WithHeader("Retry-After", "3600")
	}
	h := http.Header{}
	for k, v := range map[string]string{x402.HeaderPaymentSignature: in.PaymentSignature, x402.HeaderLegacyPayment: in.XPayment, x402.HeaderVersion: in.X402Version} {
		if v != "" {
			h.Set(k, v)
		}
	}
	var payment *x402.PaymentPayload
	if p, ok, err := x402.PaymentFromHeaders(h); err != nil {
		return nil, apierr.Invalid("The payment header is malformed.", apierr.Field("header.Payment-Signature", "%s", err.Error()))
	} else if ok {
		payment = &p
	}
	p := principal(ctx)
	res, settled, err := s.topUp.Buy(ctx, p.Key().AccountID, p.URL, in.Body, payment)
	var pe *credits.PaymentError
	if errors.As(err, &pe) {
		return nil, apierr.New(apierr.PaymentRequired, "Payment required: %s. Sign the requirements in Payment-Required and retry with Payment-Signature and the same Idempotency-Key.", pe.Reason).
			WithHeader(x402.HeaderPaymentRequired, pe.Required)
	}
	if err != nil {
		return nil, err
	}
	hdr, err := x402.EncodeHeader(settled)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventCreditsToppedUp, res)
	return &topUpOutput{PaymentResponse: hdr, Receipt: res.ReceiptID, Body: *res}, nil
}
