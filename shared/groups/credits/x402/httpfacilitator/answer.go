package httpfacilitator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"platformapi/shared/groups/credits/x402"
)

// StatusError is a facilitator answer with a status that carries no
// decision about the payment: 401/403 (our credentials), 404, 429, 5xx, or a
// 4xx whose body is not a rejection.
type StatusError struct {
	Op         string // "verify" or "settle"
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("httpfacilitator: %s: facilitator answered %d %s", e.Op, e.StatusCode, http.StatusText(e.StatusCode))
}

// isDecisionStatus lists the non-2xx statuses with which facilitators
// (the x402 reference one among them) return a rejection body such as
// {"isValid": false, "invalidReason": "..."}. Such a body is read as the
// payer's rejection; any other body with these statuses is a StatusError.
func isDecisionStatus(code int) bool {
	switch code {
	case http.StatusBadRequest, http.StatusPaymentRequired, http.StatusConflict, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

type verifyBody struct {
	IsValid       *bool  `json:"isValid"`
	InvalidReason string `json:"invalidReason"`
	Payer         string `json:"payer"`
}

type settleBody struct {
	Success     *bool   `json:"success"`
	ErrorReason string  `json:"errorReason"`
	Payer       string  `json:"payer"`
	Transaction *string `json:"transaction"`
	Network     *string `json:"network"`
}

// verifyAnswer maps a /verify answer. A rejection without a reason gets
// x402.ReasonVerifyFailed, so callers always have one to report.
func verifyAnswer(status int, body []byte) (x402.VerifyResponse, error) {
	var b verifyBody
	if err := decodeObject(body, &b); err != nil || b.IsValid == nil {
		return x402.VerifyResponse{}, badAnswer("verify", status, err)
	}
	if status/100 != 2 && (*b.IsValid || b.InvalidReason == "") {
		return x402.VerifyResponse{}, &StatusError{Op: "verify", StatusCode: status}
	}
	if *b.IsValid {
		return x402.VerifyResponse{IsValid: true, Payer: b.Payer}, nil
	}
	if b.InvalidReason == "" {
		b.InvalidReason = x402.ReasonVerifyFailed
	}
	return x402.VerifyResponse{InvalidReason: b.InvalidReason, Payer: b.Payer}, nil
}

// settleAnswer maps a /settle answer. A success must name a transaction on
// the required network; anything less is not trusted as money received.
func settleAnswer(status int, body []byte, network string) (x402.SettleResponse, error) {
	var b settleBody
	if err := decodeObject(body, &b); err != nil || b.Success == nil {
		return x402.SettleResponse{}, badAnswer("settle", status, err)
	}
	if status/100 != 2 && (*b.Success || b.ErrorReason == "") {
		return x402.SettleResponse{}, &StatusError{Op: "settle", StatusCode: status}
	}
	if *b.Success {
		if b.Transaction == nil || *b.Transaction == "" || b.Network == nil || *b.Network != network {
			return x402.SettleResponse{}, fmt.Errorf("%w: settle success without a transaction on %s", ErrBadAnswer, network)
		}
		return x402.SettleResponse{Success: true, Payer: b.Payer, Transaction: *b.Transaction, Network: network}, nil
	}
	if b.ErrorReason == "" {
		b.ErrorReason = x402.ReasonSettleFailed
	}
	return x402.SettleResponse{ErrorReason: b.ErrorReason, Payer: b.Payer, Network: network}, nil
}

func badAnswer(op string, status int, err error) error {
	if status/100 != 2 {
		return &StatusError{Op: op, StatusCode: status}
	}
	if err == nil {
		err = fmt.Errorf("required field missing")
	}
	return fmt.Errorf("%w: %s: %v", ErrBadAnswer, op, err)
}

// decodeObject decodes exactly one JSON object with no trailing data.
func decodeObject(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after JSON object")
	}
	return nil
}
