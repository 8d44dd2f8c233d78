package x402

// Version is the x402 protocol version this package speaks on the wire.
const Version = 2

// SchemeExact is the only payment scheme supported: a transfer of exactly the
// required amount, authorised with EIP-3009.
const SchemeExact = "exact"

// ResourceInfo describes the resource a payment is for.
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequired is the body of the Payment-Required header of a 402
// challenge. Protocol extensions are neither sent nor read.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    ResourceInfo          `json:"resource"`
	Accepts     []PaymentRequirements `json:"accepts"`
}

// PaymentRequirements is one way of paying that the server accepts. For the
// exact EVM scheme Amount is in the asset's atomic units (USDC: 6 decimals),
// Asset is the token contract address and Network a CAIP-2 "eip155:<chainId>".
type PaymentRequirements struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount"`
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
	MaxTimeoutSeconds int64  `json:"maxTimeoutSeconds"`
	Extra             Extra  `json:"extra"`
}

// Extra carries the asset contract's EIP-712 domain name and version, which
// the payer needs to sign and the verifier needs to rebuild the digest (USDC
// uses "USD Coin" or "USDC" depending on the chain, version "2").
type Extra struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PaymentPayload is the body of the Payment-Signature (or legacy X-PAYMENT)
// header: the requirements the client chose and its signed authorization.
// A payload decoded from the legacy v1 shape has X402Version 1 and only
// Accepted.Scheme and Accepted.Network set until Upgrade is called.
type PaymentPayload struct {
	X402Version int                 `json:"x402Version"`
	Resource    *ResourceInfo       `json:"resource,omitempty"`
	Accepted    PaymentRequirements `json:"accepted"`
	Payload     ExactPayload        `json:"payload"`
}

// ExactPayload is the scheme-specific part of an exact EVM payment.
type ExactPayload struct {
	Signature     string        `json:"signature"`
	Authorization Authorization `json:"authorization"`
}

// Authorization is the EIP-3009 message as it travels: addresses as 0x hex,
// numbers as decimal (or 0x hex) strings, nonce as 32 bytes of 0x hex. Parse
// turns it into typed values.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// VerifyResponse is a facilitator's answer to /verify. InvalidReason is one
// of the Reason constants (or a remote facilitator's own code) when IsValid
// is false.
type VerifyResponse struct {
	IsValid       bool   `json:"isValid"`
	InvalidReason string `json:"invalidReason,omitempty"`
	Payer         string `json:"payer,omitempty"`
}

// SettleResponse is a facilitator's answer to /settle and the body of the
// Payment-Response header. Transaction is empty when Success is false.
type SettleResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
}
