package x402

import (
	"encoding/json"
	"fmt"
)

// wirePayload is the union of the v2 PaymentPayload and the v1 X-PAYMENT
// shapes, so one decode serves both and x402Version picks the reading.
type wirePayload struct {
	X402Version int                  `json:"x402Version"`
	Resource    json.RawMessage      `json:"resource"` // v2 only; v1 has none
	Accepted    *PaymentRequirements `json:"accepted"` // v2
	Scheme      string               `json:"scheme"`   // v1
	Network     string               `json:"network"`  // v1
	Payload     *ExactPayload        `json:"payload"`
}

// DecodePaymentPayload decodes a Payment-Signature or X-PAYMENT header value.
//
// Accepted shapes: v2 {x402Version: 2, resource?, accepted, payload}, and
// the legacy v1 {x402Version: 1, scheme, network, payload}, whose network may
// be a v1 name (base, base-sepolia, avalanche, avalanche-fuji, polygon,
// polygon-amoy) or already CAIP-2. A v1 payload comes back with X402Version 1
// and only Accepted.Scheme and Accepted.Network set; Upgrade completes it.
//
// For the exact scheme the payload's fields are checked for form here
// (signature hex, addresses, uint256 numbers, 32-byte nonce), so an
// ill-formed payment is ErrMalformedHeader (400); whether it pays is the
// facilitator's decision (402). Payloads of other schemes are not inspected:
// the facilitator rejects them with ReasonInvalidScheme.
func DecodePaymentPayload(value string) (PaymentPayload, error) {
	var w wirePayload
	if err := decodeHeader(value, &w); err != nil {
		return PaymentPayload{}, err
	}
	p := PaymentPayload{X402Version: w.X402Version}
	switch w.X402Version {
	case Version:
		if w.Accepted == nil {
			return p, fmt.Errorf("%w: accepted is required", ErrMalformedHeader)
		}
		p.Accepted = *w.Accepted
		if len(w.Resource) > 0 && string(w.Resource) != "null" {
			p.Resource = new(ResourceInfo)
			if err := json.Unmarshal(w.Resource, p.Resource); err != nil {
				return p, fmt.Errorf("%w: resource: %v", ErrMalformedHeader, err)
			}
		}
	case 1:
		p.Accepted = PaymentRequirements{Scheme: w.Scheme, Network: v1Network(w.Network)}
	default:
		return p, fmt.Errorf("%w: unsupported x402Version %d", ErrMalformedHeader, w.X402Version)
	}
	if w.Payload == nil {
		return p, fmt.Errorf("%w: payload is required", ErrMalformedHeader)
	}
	p.Payload = *w.Payload
	if err := checkForm(p); err != nil {
		return p, fmt.Errorf("%w: %v", ErrMalformedHeader, err)
	}
	return p, nil
}

// checkForm checks that the fields a verifier will read are present and
// well-formed.
func checkForm(p PaymentPayload) error {
	a := p.Accepted
	if a.Scheme == "" || a.Network == "" {
		return fmt.Errorf("scheme and network are required")
	}
	if p.X402Version == Version && (a.Amount == "" || a.Asset == "" || a.PayTo == "") {
		return fmt.Errorf("accepted.amount, accepted.asset and accepted.payTo are required")
	}
	if a.Scheme != SchemeExact {
		return nil
	}
	if _, err := p.Payload.SignatureBytes(); err != nil {
		return err
	}
	_, err := p.Payload.Authorization.Parse()
	return err
}

// SignatureBytes decodes the 0x-hex signature.
func (e ExactPayload) SignatureBytes() ([]byte, error) {
	b, err := parseHexBytes(e.Signature)
	if err != nil {
		return nil, fmt.Errorf("payload.signature: %v", err)
	}
	return b, nil
}

// Upgrade returns a v1 payload in v2 form for req: Accepted takes req's
// terms but keeps the scheme and network the client named, so a mismatch
// there is still reported. A v1 client signs only the authorization, which
// facilitators check against req anyway, so nothing the client attested is
// lost. A v2 payload is returned unchanged.
func (p PaymentPayload) Upgrade(req PaymentRequirements) PaymentPayload {
	if p.X402Version != 1 {
		return p
	}
	accepted := req
	accepted.Scheme, accepted.Network = p.Accepted.Scheme, p.Accepted.Network
	p.X402Version, p.Accepted = Version, accepted
	return p
}

// v1Networks maps x402 v1 network names to CAIP-2.
var v1Networks = map[string]string{
	"base":           "eip155:8453",
	"base-sepolia":   "eip155:84532",
	"avalanche":      "eip155:43114",
	"avalanche-fuji": "eip155:43113",
	"polygon":        "eip155:137",
	"polygon-amoy":   "eip155:80002",
}

func v1Network(name string) string {
	if caip, ok := v1Networks[name]; ok {
		return caip
	}
	return name
}
