package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"platformapi/shared/base/strictjson"
)

// HTTP transport header names, in Go's canonical form (http.Header matches
// them case-insensitively, so PAYMENT-SIGNATURE on the wire is the same).
const (
	HeaderPaymentRequired  = "Payment-Required"  // server → client, base64 PaymentRequired
	HeaderPaymentSignature = "Payment-Signature" // client → server, base64 PaymentPayload
	HeaderPaymentResponse  = "Payment-Response"  // server → client, base64 SettleResponse
	HeaderLegacyPayment    = "X-Payment"         // x402 v1 name of Payment-Signature
	HeaderVersion          = "X402-Version"      // optional client hint: "1" or "2"
)

// MaxHeaderLen bounds an encoded header value. A real payment is about 1.5 KB
// encoded; the bound keeps a hostile header from costing more than that order
// of work to reject.
const MaxHeaderLen = 8 << 10

// ErrMalformedHeader reports a payment header that cannot be decoded: bad
// base64, bad or trailing JSON, missing fields, ill-formed values, too long,
// or conflicting headers. The caller answers 400, not 402.
var ErrMalformedHeader = errors.New("x402: malformed payment header")

// EncodeHeader returns v as base64 (standard alphabet, padded) of its JSON:
// the encoding of every x402 header.
func EncodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("x402: encode header: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// PaymentFromHeaders extracts the client's payment from Payment-Signature
// or, failing that, the legacy X-Payment header (either may carry a v1 or
// v2 payload). ok is false when neither is present. Both present with
// different values, a repeated header, or an X402-Version hint that is not
// the payload's version are malformed rather than guessed at.
func PaymentFromHeaders(h http.Header) (p PaymentPayload, ok bool, err error) {
	sig, legacy := h.Values(HeaderPaymentSignature), h.Values(HeaderLegacyPayment)
	if len(sig) > 1 || len(legacy) > 1 {
		return p, true, fmt.Errorf("%w: payment header repeated", ErrMalformedHeader)
	}
	var value string
	switch {
	case len(sig) == 1 && len(legacy) == 1 && sig[0] != legacy[0]:
		return p, true, fmt.Errorf("%w: %s and %s differ", ErrMalformedHeader, HeaderPaymentSignature, HeaderLegacyPayment)
	case len(sig) == 1:
		value = sig[0]
	case len(legacy) == 1:
		value = legacy[0]
	default:
		return p, false, nil
	}
	if p, err = DecodePaymentPayload(value); err != nil {
		return p, true, err
	}
	if hint := h.Get(HeaderVersion); hint != "" && hint != strconv.Itoa(p.X402Version) {
		return p, true, fmt.Errorf("%w: %s %q does not match payload version %d", ErrMalformedHeader, HeaderVersion, hint, p.X402Version)
	}
	return p, true, nil
}

// DecodePaymentRequired decodes a Payment-Required header (client side).
func DecodePaymentRequired(value string) (PaymentRequired, error) {
	var pr PaymentRequired
	if err := decodeHeader(value, &pr); err != nil {
		return pr, err
	}
	if pr.X402Version != Version || len(pr.Accepts) == 0 {
		return pr, fmt.Errorf("%w: want x402Version %d and at least one accepts entry", ErrMalformedHeader, Version)
	}
	return pr, nil
}

// DecodeSettleResponse decodes a Payment-Response header (client side).
func DecodeSettleResponse(value string) (SettleResponse, error) {
	var sr SettleResponse
	err := decodeHeader(value, &sr)
	return sr, err
}

// decodeHeader decodes base64 JSON into v. It accepts the standard alphabet,
// padded or not, and nothing else: the stdlib decoder silently skips CR and
// LF, so the alphabet is checked first. The JSON must be one object with no
// trailing data, and no duplicate or case-variant keys. Unknown fields are
// ignored, as x402 lets peers add fields.
func decodeHeader(value string, v any) error {
	if value == "" {
		return fmt.Errorf("%w: empty", ErrMalformedHeader)
	}
	if len(value) > MaxHeaderLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrMalformedHeader, MaxHeaderLen)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; !isBase64Char(c) {
			return fmt.Errorf("%w: byte %d is not standard base64", ErrMalformedHeader, i)
		}
	}
	enc := base64.StdEncoding
	if len(value)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	raw, err := enc.Strict().DecodeString(value)
	if err != nil {
		return fmt.Errorf("%w: base64: %v", ErrMalformedHeader, err)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrMalformedHeader)
	}
	// strictjson: duplicate or case-variant keys would let this decoder and
	// a facilitator or signer read different payments from one header.
	if err := strictjson.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: json: %v", ErrMalformedHeader, err)
	}
	return nil
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}
