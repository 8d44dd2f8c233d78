package localfacilitator

import (
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/credits/x402"
)

// verdict is the outcome of the offline checks. reason is empty when the
// payment passed them; payer is set only once the signature is proven.
type verdict struct {
	reason string
	payer  common.Address
	auth   x402.TransferAuthorization
	digest common.Hash
	key    store.Key // the nonce record's key, set once the offline checks pass
}

func reject(reason string) verdict { return verdict{reason: reason} }

// checkPayment applies every rule that needs neither the store nor a chain.
// The order makes each wrong field report its own reason: what the client
// chose (accepted) first, then the signed authorization's terms, its window,
// and last the signature over it.
func checkPayment(p x402.PaymentPayload, req x402.PaymentRequirements, terms x402.Terms, now time.Time, skew time.Duration) verdict {
	a := p.Accepted
	switch {
	case p.X402Version != x402.Version:
		return reject(x402.ReasonInvalidVersion)
	case a.Scheme != x402.SchemeExact:
		return reject(x402.ReasonInvalidScheme)
	case a.Network != req.Network:
		return reject(x402.ReasonInvalidNetwork)
	case !strings.EqualFold(a.Asset, req.Asset):
		return reject(x402.ReasonAssetMismatch)
	}
	auth, err := p.Payload.Authorization.Parse()
	if err != nil {
		return reject(x402.ReasonInvalidPayload)
	}
	// accepted echoes the requirements verbatim, so its strings compare
	// exactly; the signed authorization compares by value.
	switch {
	case a.Amount != req.Amount || auth.Value.Cmp(terms.Amount) != 0:
		return reject(x402.ReasonValueMismatch)
	case !strings.EqualFold(a.PayTo, req.PayTo) || auth.To != terms.PayTo:
		return reject(x402.ReasonRecipient)
	}
	if reason := checkWindow(auth, now, terms.MaxTimeout, skew); reason != "" {
		return reject(reason)
	}
	sig, err := p.Payload.SignatureBytes()
	if err != nil {
		return reject(x402.ReasonInvalidPayload)
	}
	digest := auth.Digest(terms.Domain)
	signer, err := x402.RecoverSigner(digest, sig)
	if err != nil || signer != auth.From {
		return reject(x402.ReasonSignature)
	}
	return verdict{payer: signer, auth: auth, digest: digest}
}

// checkWindow applies the validity-window rules of the package comment.
func checkWindow(auth x402.TransferAuthorization, now time.Time, maxTimeout, skew time.Duration) string {
	at := func(d time.Duration) *big.Int { return big.NewInt(now.Add(d).Unix()) }
	switch {
	case auth.ValidBefore.Cmp(at(0)) <= 0:
		return x402.ReasonExpired
	case auth.ValidAfter.Cmp(at(skew)) > 0:
		return x402.ReasonNotYetValid
	case auth.ValidBefore.Cmp(at(maxTimeout+skew)) > 0:
		return x402.ReasonWindowTooLong
	}
	return ""
}
