// Package creditsapi is the credits endpoint group: the balance,
// and credit purchases through x402 (package topup).
package creditsapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/decimal"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/topup"
	"platformapi/shared/groups/credits/x402"
)

// Deps are what the group needs. A nil Facilitator or an empty PayTo makes
// the top-up answer 503.
type Deps struct {
	Store       store.Store
	TopUp       topup.TopUpConfig
	Facilitator x402.Facilitator
}

type handlers struct {
	k      *api.Kernel
	topUp  *topup.TopUp
	ledger *credits.Ledger
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, topUp: topup.NewTopUp(d.Store, k.Now, d.TopUp, d.Facilitator), ledger: credits.NewLedger(d.Store, k.Now)}
	api.Register(k, "credits.balance.read", http.StatusOK, h.balance)
	api.Register(k, "credits.ledger.list", http.StatusOK, h.listLedger)
	api.Register(k, "credits.x402.topUp", http.StatusOK, h.buy)
	return nil
}

type balanceBody struct {
	Balance float64 `json:"balance" doc:"Credits available to the account"`
	Unit    string  `json:"unit" enum:"credits"`
}

// balance answers from the account item: a strongly consistent read made
// by this very request; a sliced account's from one consistent snapshot of
// its slices (docs/credits.md).
func (h *handlers) balance(ctx context.Context, _ *struct{}) (*api.Body[balanceBody], error) {
	acct, err := api.PrincipalFrom(ctx).AccountItem(ctx)
	if err != nil {
		return nil, err
	}
	micro := acct.Int(accounts.AttrBalance)
	if credits.SlicesOf(acct) > 1 {
		if micro, err = h.ledger.Total(ctx, strings.TrimPrefix(acct.Key().PK, "acct#")); err != nil {
			return nil, err
		}
	}
	return api.Reply(balanceBody{Balance: float64(micro) / catalog.MicroPerCredit, Unit: "credits"}), nil
}

// entryView is a ledger entry as GET /credits/ledger shows it
// (docs/credits.md): amounts as exact decimal numbers of credits.
type entryView struct {
	ID            string      `json:"id" doc:"led_…" example:"led_01JH0000000000000000000000"`
	OccurredAt    time.Time   `json:"occurredAt"`
	Type          string      `json:"type" enum:"grant,top_up,charge,hold,capture,release"`
	AmountCredits json.Number `json:"amountCredits" doc:"Signed change of the balance: a hold or a charge is negative, a release, a grant or a top-up positive, a capture 0" example:"-0.1"`
	BalanceAfter  json.Number `json:"balanceAfter" doc:"The balance once this entry committed" example:"9.9"`
	Operation     *string     `json:"operation" doc:"The operation that caused it, or what settled it (trading.orders.fill, wallets.transactions.confirm, credits.holds.expire, ...)"`
	RequestID     *string     `json:"requestId" doc:"The request (or run) that caused it"`
	KeyID         *string     `json:"keyId" doc:"The key whose request caused it"`
	ProjectID     *string     `json:"projectId"`
	ReferenceID   *string     `json:"referenceId" doc:"The receipt, hold or token behind the movement"`
}

func view(e credits.Entry) entryView {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return entryView{ID: e.ID, OccurredAt: e.OccurredAt, Type: e.Type,
		AmountCredits: json.Number(decimal.Format(e.Amount, 6)), BalanceAfter: json.Number(decimal.Format(e.BalanceAfter, 6)),
		Operation: opt(e.Operation), RequestID: opt(e.RequestID), KeyID: opt(e.KeyID()), ProjectID: opt(e.ProjectID), ReferenceID: opt(e.Reference)}
}

type ledgerInput struct {
	Since     string `query:"since" maxLength:"64" doc:"Earliest entry, inclusive (RFC 3339); default: 90 days before until" example:"2026-01-02T00:00:00Z"`
	Until     string `query:"until" maxLength:"64" doc:"Latest entry, exclusive (RFC 3339); default: now" example:"2026-01-03T00:00:00Z"`
	KeyID     string `query:"keyId" maxLength:"64" doc:"Only the entries this key's requests caused" example:"key_01JH0000000000000000000000"`
	Operation string `query:"operation" maxLength:"200" doc:"Only this operation, or its refinements" example:"services.invoke"`
	Type      string `query:"type" enum:"grant,top_up,charge,hold,capture,release" doc:"Only this entry type"`
	api.ListInput
}

// ledger lists what moved the balance, for the key's own subtree.
func (h *handlers) listLedger(ctx context.Context, in *ledgerInput) (*api.Body[api.Page[entryView]], error) {
	p := api.PrincipalFrom(ctx)
	f, err := audit.ParseListQuery(audit.Viewer{AccountID: p.Key().AccountID, KeyPath: p.KeyPath(), ProjectID: p.ProjectID}, audit.ListQuery{
		Since: in.Since, Until: in.Until, KeyID: in.KeyID, Operation: in.Operation, Limit: in.Limit, Cursor: in.Cursor,
	}, h.k.Now())
	if err != nil {
		return nil, err
	}
	if in.Until == "" {
		f.Until = f.Until.Add(time.Millisecond) // up to now, inclusive
	}
	entries, next, err := h.ledger.List(ctx, credits.ListFilter{Filter: f, Type: in.Type})
	if err != nil {
		return nil, err
	}
	out := make([]entryView, len(entries))
	for i, e := range entries {
		out[i] = view(e)
	}
	return api.Reply(api.NewPage(out, next)), nil
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
		res, settled, err = h.topUp.Buy(ctx, p.Key().AccountID, api.CallID(ctx), p.URL, in.Body, payment)
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
	h.k.Publish(ctx, eventCreditsToppedUp, res)
	return &topUpOutput{PaymentResponse: receipt, Receipt: res.ReceiptID, Body: *res}, nil
}
