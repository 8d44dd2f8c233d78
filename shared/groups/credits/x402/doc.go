// Package x402 holds the payment core of the x402 v2 protocol for the
// "exact" scheme on EVM chains (an EIP-3009 transferWithAuthorization signed
// under EIP-712): the wire types, the base64 header codec of the HTTP
// transport, the EIP-712 digest, signature recovery, a signing helper for
// clients and tests, and the Facilitator port that verifies and settles a
// payment.
//
// The package knows nothing about accounts, credits or HTTP handlers: the
// top-up endpoint builds PaymentRequirements from server configuration, sends
// them in a 402 challenge, decodes the client's payment header, and asks a
// Facilitator to verify and then settle it before crediting anything.
//
// Two adapters implement the port: localfacilitator (development only, moves
// no money) and httpfacilitator (a remote facilitator's /verify and /settle).
package x402
