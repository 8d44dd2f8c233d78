// Package topup sells credits through x402 (docs/credits.md): a challenge, then a
// paid retry verified and settled by a facilitator, credited exactly once.
// It is apart from the ledger so that only the function that sells credits
// links the EVM code x402 needs.
package topup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/x402"
	"platformapi/shared/groups/credits/x402/chainstate"
)

// TopUpConfig is the server-owned side of a purchase: what is paid, in what,
// to whom. Clients never supply any of it.
type TopUpConfig struct {
	Network           string // CAIP-2, e.g. eip155:84532
	Asset             string // USDC contract address (6 decimals)
	AssetName         string // EIP-712 domain name of the asset contract
	AssetVersion      string // EIP-712 domain version
	PayTo             string // empty: top-up is not configured (503)
	MaxTimeoutSeconds int64
	// RPCURL is a JSON-RPC endpoint of Network, used to reconcile a
	// settlement whose answer was lost (X402_RPC_URL); empty: such a
	// payment waits until an operator configures one.
	RPCURL string
}

// Requirements builds the exact-scheme payment requirements for cents.
func (c TopUpConfig) Requirements(cents int64) x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme: x402.SchemeExact, Network: c.Network, Amount: x402.USDCFromCents(cents),
		Asset: c.Asset, PayTo: c.PayTo, MaxTimeoutSeconds: c.MaxTimeoutSeconds,
		Extra: x402.Extra{Name: c.AssetName, Version: c.AssetVersion},
	}
}

// TopUpRequest is the body of POST /credits/x402/top-up: the amount only.
type TopUpRequest struct {
	AmountUSD float64 `json:"amountUsd" minimum:"5" maximum:"500" doc:"US dollars to spend, 5 to 500, at most two decimals"`
}

// Cents validates the amount and returns it in cents.
func (r TopUpRequest) Cents() (int64, error) {
	cents := math.Round(r.AmountUSD * 100)
	if math.Abs(r.AmountUSD*100-cents) > 1e-7 {
		return 0, apierr.Invalid("amountUsd has more than two decimals.", apierr.Field("body.amountUsd", "at most two decimal places"))
	}
	if !(cents >= 500 && cents <= 50000) { // written so that NaN is refused too
		return 0, apierr.Invalid("amountUsd is out of range.", apierr.Field("body.amountUsd", "must be between 5 and 500"))
	}
	return int64(cents), nil
}

// TopUpResult is the success body.
type TopUpResult struct {
	CreditedUSD     float64 `json:"creditedUsd"`
	CreditedCredits float64 `json:"creditedCredits"`
	ReceiptID       string  `json:"receiptId"`
	Balance         float64 `json:"balance" doc:"The account's balance after the top-up, in credits"`
}

// PaymentError is a 402 of the x402 flow: a challenge or a rejected payment.
// It carries the Payment-Required header and is never stored for replay.
type PaymentError struct {
	Reason   string
	Required string // base64 PaymentRequired
}

func (e *PaymentError) Error() string { return "topup: payment required: " + e.Reason }

// TopUp sells credits through x402 with a facilitator.
type TopUp struct {
	st     store.Store
	now    func() time.Time
	ledger *credits.Ledger
	cfg    TopUpConfig
	fac    x402.Facilitator
	chain  AuthorizationChecker
}

// AuthorizationChecker says whether an EIP-3009 authorization was used on
// chain (chainstate.Client).
type AuthorizationChecker interface {
	AuthorizationUsed(ctx context.Context, asset, from, nonce string) (bool, error)
}

// settleGrace is how long a settlement in flight is left alone before a
// retry reconciles it with the chain: longer than a facilitator's answer
// can take.
const settleGrace = 2 * time.Minute

// NewTopUp builds the purchase flow.
func NewTopUp(st store.Store, now func() time.Time, cfg TopUpConfig, fac x402.Facilitator) *TopUp {
	t := &TopUp{st: st, now: now, ledger: credits.NewLedger(st, now), cfg: cfg, fac: fac}
	if cfg.RPCURL != "" {
		t.chain = chainstate.New(cfg.RPCURL)
	}
	return t
}

// WithChain makes t reconcile lost settlements with c.
func (t *TopUp) WithChain(c AuthorizationChecker) *TopUp {
	t.chain = c
	return t
}

// Configured reports whether purchases can be made at all.
func (t *TopUp) Configured() bool { return t != nil && t.fac != nil && t.cfg.PayTo != "" }

// Challenge is the 402 of a purchase of req: its payment requirements and
// why a payment is needed (none sent, or the one sent was refused).
func (t *TopUp) Challenge(resource string, req TopUpRequest, reason string) error {
	cents, err := req.Cents()
	if err != nil {
		return err
	}
	return t.challenge(resource, cents, reason)
}

func (t *TopUp) challenge(resource string, cents int64, reason string) *PaymentError {
	hdr, _ := x402.EncodeHeader(x402.PaymentRequired{
		X402Version: x402.Version, Error: reason,
		Resource: x402.ResourceInfo{URL: resource, Description: fmt.Sprintf("%d credits", cents*catalog.CreditsPerUSD/100), MimeType: "application/json"},
		Accepts:  []x402.PaymentRequirements{t.cfg.Requirements(cents)},
	})
	return &PaymentError{Reason: reason, Required: hdr}
}

func paymentKey(req x402.PaymentRequirements, a x402.Authorization) store.Key {
	return store.Key{PK: "x402pay#" + req.Network + "#" + strings.ToLower(req.Asset) + "#" + strings.ToLower(a.From) + "#" + strings.ToLower(a.Nonce), SK: "payment"}
}

// Buy runs one top-up. Without a payment it returns the challenge. With one,
// it verifies, records the payment as in flight (so one authorization is
// settled and credited at most once, whatever the idempotency key), settles,
// and credits the account in the same transaction that marks the payment
// credited. A payment settled but not yet credited (a crash in between) is
// credited by the next attempt with the same payment. callID names the call
// (its caller and Idempotency-Key; "" for none): a retry of the call that
// credited the payment answers that top-up again, since the process may
// have died after the credit and before the call's answer and event.
func (t *TopUp) Buy(ctx context.Context, accountID, callID, resource string, req TopUpRequest, payment *x402.PaymentPayload) (*TopUpResult, *x402.SettleResponse, error) {
	cents, err := req.Cents()
	if err != nil {
		return nil, nil, err
	}
	if payment == nil {
		return nil, nil, t.challenge(resource, cents, "payment required")
	}
	requirements := t.cfg.Requirements(cents)
	p := payment.Upgrade(requirements)
	pk := paymentKey(requirements, p.Payload.Authorization)
	// A payment seen before resumes before anything else: once settled its
	// nonce is used on chain, so verifying it again would refuse the very
	// retry that must credit it.
	switch _, err := t.st.Get(ctx, pk); {
	case err == nil:
		return t.resume(ctx, accountID, callID, resource, cents, pk)
	case !errors.Is(err, store.ErrNotFound):
		return nil, nil, fmt.Errorf("topup: read payment: %w", err)
	}
	v, err := t.fac.Verify(ctx, p, requirements)
	if err != nil {
		return nil, nil, fmt.Errorf("topup: verify payment: %w", err)
	}
	if !v.IsValid {
		return nil, nil, t.challenge(resource, cents, v.InvalidReason)
	}
	now := t.now()
	rec := store.NewItem(pk)
	rec["state"] = "settling"
	rec["settlingSince"] = now.Unix()
	rec["from"] = p.Payload.Authorization.From
	rec["nonce"] = p.Payload.Authorization.Nonce
	rec["accountId"] = accountID
	rec["receiptId"] = ids.New("rcpt", now)
	if err := t.st.Put(ctx, rec, store.NotExists()); err != nil {
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, nil, fmt.Errorf("topup: record payment: %w", err)
		}
		return t.resume(ctx, accountID, callID, resource, cents, pk)
	}
	s, err := t.fac.Settle(ctx, p, requirements)
	if err != nil {
		// The transfer may have happened with its answer lost: the record
		// stays settling, and a retry with this payment reconciles it with
		// the chain once the grace has passed.
		e := apierr.New(apierr.ServiceUnavailable, "The payment's settlement did not answer; retry with the same payment to complete it.").
			WithHeader("Retry-After", strconv.Itoa(int(settleGrace.Seconds())))
		e.Cause = err
		return nil, nil, e
	}
	if !s.Success {
		_ = t.st.Delete(context.WithoutCancel(ctx), pk, store.AttrEquals("state", "settling"))
		return nil, nil, t.challenge(resource, cents, s.ErrorReason)
	}
	return t.settled(ctx, accountID, callID, resource, cents, pk, rec.String("receiptId"), s)
}

// settled records the settlement, then credits it.
func (t *TopUp) settled(ctx context.Context, accountID, callID, resource string, cents int64, pk store.Key, receiptID string, s x402.SettleResponse) (*TopUpResult, *x402.SettleResponse, error) {
	settled, _ := json.Marshal(s)
	if _, err := t.st.Update(ctx, pk, store.Update{Set: map[string]any{"state": "settled", "settle": settled}}, store.AttrEquals("state", "settling")); err != nil {
		return nil, nil, fmt.Errorf("topup: record settlement: %w", err)
	}
	return t.credit(ctx, accountID, callID, resource, cents, pk, receiptID, s)
}

// resume handles a payment seen before: credit it if it was settled but not
// credited (for the same account); answer the top-up again to the call
// that credited it; else refuse it as used.
func (t *TopUp) resume(ctx context.Context, accountID, callID, resource string, cents int64, pk store.Key) (*TopUpResult, *x402.SettleResponse, error) {
	it, err := t.st.Get(ctx, pk)
	if err != nil {
		return nil, nil, fmt.Errorf("topup: read payment: %w", err)
	}
	mine := it.String("accountId") == accountID
	switch state := it.String("state"); {
	case mine && (state == "settled" || state == "credited" && callID != "" && it.String("creditedBy") == callID):
		var s x402.SettleResponse
		if err := json.Unmarshal(it.Bytes("settle"), &s); err != nil {
			return nil, nil, fmt.Errorf("topup: decode settlement: %w", err)
		}
		if state == "settled" {
			return t.credit(ctx, accountID, callID, resource, cents, pk, it.String("receiptId"), s)
		}
		res, err := t.answer(ctx, accountID, cents, pk, it.String("receiptId"), it.Bytes("result"))
		return res, &s, err
	case mine && state == "settling":
		return t.reconcile(ctx, accountID, callID, resource, cents, pk, it)
	}
	return nil, nil, t.challenge(resource, cents, "payment authorization already used")
}

// reconcile settles the question a lost settlement answer left open: the
// token contract's authorizationState says whether the transfer happened.
// Used: it is recorded as settled and credited, exactly once. Unused: the
// attempt is forgotten, so the payment can be settled afresh.
func (t *TopUp) reconcile(ctx context.Context, accountID, callID, resource string, cents int64, pk store.Key, it store.Item) (*TopUpResult, *x402.SettleResponse, error) {
	wait := func(detail string) *apierr.Error {
		return apierr.New(apierr.ServiceUnavailable, "%s", detail).WithHeader("Retry-After", strconv.Itoa(int(settleGrace.Seconds())))
	}
	if t.now().Sub(time.Unix(it.Int("settlingSince"), 0)) < settleGrace {
		// Another request is settling it now (or its answer was lost a
		// moment ago): this one may not use the payment meanwhile.
		return nil, nil, t.challenge(resource, cents, "payment authorization is being settled by another request")
	}
	if t.chain == nil {
		return nil, nil, wait("This payment's settlement is unconfirmed and cannot be checked on chain here (X402_RPC_URL); retry later.")
	}
	used, err := t.chain.AuthorizationUsed(ctx, t.cfg.Asset, it.String("from"), it.String("nonce"))
	if err != nil {
		e := wait("The chain could not be asked whether this payment settled; retry later.")
		e.Cause = err
		return nil, nil, e
	}
	if !used {
		if err := t.st.Delete(ctx, pk, store.AttrEquals("state", "settling")); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return nil, nil, fmt.Errorf("topup: forget unsettled payment: %w", err)
		}
		return nil, nil, wait("This payment never settled; retry with it to settle it now.")
	}
	s := x402.SettleResponse{Success: true, Payer: it.String("from"), Network: t.cfg.Network}
	return t.settled(ctx, accountID, callID, resource, cents, pk, it.String("receiptId"), s)
}

// credit moves a settled payment to credited, by call callID, together
// with the balance. A concurrent attempt with the same payment loses the
// state condition: the payment has been credited by the other, and is used.
func (t *TopUp) credit(ctx context.Context, accountID, callID, resource string, cents int64, pk store.Key, receiptID string, s x402.SettleResponse) (*TopUpResult, *x402.SettleResponse, error) {
	now := t.now()
	micro := creditedMicro(cents)
	err := t.ledger.Apply(ctx, accountID, func(a credits.Account) ([]store.Op, *credits.Change, error) {
		ch, err := a.Change(ctx, now, credits.Move{Type: credits.TypeTopUp, Amount: micro, Reference: receiptID})
		if err != nil {
			return nil, nil, err
		}
		return append([]store.Op{
			store.UpdateOp(pk, store.Update{Set: map[string]any{"state": "credited", "creditedBy": callID}}, store.AttrEquals("state", "settled")),
		}, ch.Ops...), ch, nil
	})
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index == 0 {
		return nil, nil, t.challenge(resource, cents, "payment authorization already used")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("topup: credit top-up: %w", err)
	}
	res, err := t.answer(ctx, accountID, cents, pk, receiptID, nil)
	return res, &s, err
}

// answer is the result of the credited top-up of payment pk: the one
// recorded with the payment (recorded), else one with the balance now,
// which it records. Every retry of the call that credited it then answers,
// and announces, the same top-up with the same data, so that an event the
// call recorded before it died is not recorded again under another id.
func (t *TopUp) answer(ctx context.Context, accountID string, cents int64, pk store.Key, receiptID string, recorded []byte) (*TopUpResult, error) {
	if len(recorded) > 0 {
		return decodeResult(recorded)
	}
	bal, err := t.ledger.Balance(ctx, accountID)
	if err != nil {
		return nil, err
	}
	micro := creditedMicro(cents)
	res := TopUpResult{
		CreditedUSD: float64(cents) / 100, CreditedCredits: float64(micro) / catalog.MicroPerCredit,
		ReceiptID: receiptID, Balance: float64(bal) / catalog.MicroPerCredit,
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	_, err = t.st.Update(ctx, pk, store.Update{Set: map[string]any{"result": raw}}, store.AttrNotExists("result"))
	if errors.Is(err, store.ErrConditionFailed) {
		// Another attempt of the call recorded its result first.
		it, gerr := t.st.Get(ctx, pk)
		if gerr != nil {
			return nil, fmt.Errorf("topup: read payment: %w", gerr)
		}
		return decodeResult(it.Bytes("result"))
	}
	if err != nil {
		return nil, fmt.Errorf("topup: record result: %w", err)
	}
	return &res, nil
}

func decodeResult(recorded []byte) (*TopUpResult, error) {
	var res TopUpResult
	if err := json.Unmarshal(recorded, &res); err != nil {
		return nil, fmt.Errorf("topup: decode recorded result: %w", err)
	}
	return &res, nil
}

// creditedMicro is what a payment of cents buys, in micro-credits.
func creditedMicro(cents int64) int64 {
	return cents * catalog.MicroPerCredit * catalog.CreditsPerUSD / 100
}
