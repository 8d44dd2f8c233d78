// Package localfacilitator is a DEVELOPMENT ONLY x402 facilitator: it moves
// no money on any chain. It checks everything a real facilitator checks that
// can be checked offline (scheme, network, asset, exact amount, recipient,
// validity window, the payer's EIP-712 signature, and that the authorization
// was never settled before), then "settles" by recording the authorization's
// nonce in the item store and returning a pseudo transaction hash prefixed
// "local:". It never looks at balances, so a payer with no funds passes.
//
// It exists so the whole top-up flow runs on a laptop with embedded storage
// and real signatures. Deployments that take real money must use
// httpfacilitator against a facilitator that submits transferWithAuthorization
// on chain.
//
// Validity window, against this facilitator's clock now and ClockSkew s
// (default 30 s, for client clocks that run ahead):
//
//   - validBefore <= now                      → expired
//   - validAfter  >  now + s                  → not yet valid
//   - validBefore >  now + maxTimeout + s     → window too long
//
// The last rule bounds how long a signed but unsettled authorization can be
// replayed, and hence how long its nonce record must be kept.
package localfacilitator
