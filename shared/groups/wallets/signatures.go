package wallets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/wallets/policy"
	"platformapi/shared/groups/wallets/signing"
)

// SigQuoteRequest is the body of POST /wallets/{id}/signatures/quote.
type SigQuoteRequest struct {
	Type      string          `json:"type" enum:"personal_sign,eip712" doc:"personal_sign (EIP-191) or eip712 (typed data); there is no raw-hash signing"`
	Message   *string         `json:"message,omitempty" doc:"personal_sign: the message, at most 16 KiB as sent, so that its approver reads all of it"`
	Encoding  *string         `json:"encoding,omitempty" enum:"utf8,hex" doc:"personal_sign: how message is written (utf8 by default; hex is 0x-prefixed bytes)"`
	TypedData json.RawMessage `json:"typedData,omitempty" doc:"eip712: {types, primaryType, domain, message}, at most 16 KiB as compact JSON, every type reached from primaryType or EIP712Domain, so that its approver reads all of what is signed"`
}

// SigQuote is a quoted signature: the digest that will be signed.
type SigQuote struct {
	ID         string        `json:"id" example:"wsq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID   string        `json:"walletId"`
	Type       string        `json:"type" enum:"personal_sign,eip712"`
	Digest     string        `json:"digest" doc:"The 32-byte hash that will be signed" example:"0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2"`
	Transfers  []SigTransfer `json:"transfers" doc:"The token movements the typed data authorises when it is a known transfer-shaped message (EIP-2612 or DAI permit, EIP-3009 authorization, Permit2); the policy decides each as a send of that token. Empty for anything else"`
	Policy     PolicyPreview `json:"policy"`
	ApprovalID *string       `json:"approvalId" doc:"When the policy requires approval: the approval, requested now, that another key must approve before POST /signatures"`
	ExpiresAt  time.Time     `json:"expiresAt" doc:"5 minutes ahead, or the approval's expiry when one is required"`
	CreatedAt  time.Time     `json:"createdAt"`
}

// SigTransfer is a token movement a signed message authorises.
type SigTransfer struct {
	Kind      string  `json:"kind" enum:"permit,daiPermit,transferWithAuthorization,receiveWithAuthorization,permit2Allowance,permit2Transfer" doc:"EIP-2612 permit, DAI permit, EIP-3009 transfer or receive authorization, Permit2 allowance (PermitSingle, PermitBatch) or signature transfer (Permit…TransferFrom)"`
	ChainID   *uint64 `json:"chainId" doc:"The EIP-712 domain's chainId; null when it has none"`
	Token     string  `json:"token" doc:"The token contract whose units move" example:"0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"`
	Asset     *string `json:"asset" doc:"The token's symbol on that chain; null when the deployment does not know it (then no value or rollingTotal criterion counts it)" example:"USDC"`
	Recipient string  `json:"recipient" doc:"Who may take the tokens: the spender or the payee"`
	Amount    string  `json:"amount" doc:"Base units, decimal; an unlimited permit is 2^256-1" example:"10000000"`
}

// WalletSignature is a created signature.
type WalletSignature struct {
	ID        string    `json:"id" example:"sig_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID  string    `json:"walletId"`
	Type      string    `json:"type" enum:"personal_sign,eip712"`
	Digest    string    `json:"digest"`
	Signature string    `json:"signature" doc:"0x r‖s‖v, v 27 or 28; it recovers to address" example:"0x4355c47d…1c"`
	Address   string    `json:"address" doc:"The wallet's address"`
	CreatedAt time.Time `json:"createdAt"`
}

// SigCreateRequest is the body of POST /wallets/{id}/signatures.
type SigCreateRequest struct {
	QuoteID    string  `json:"quoteId" pattern:"^wsq_[0-9A-Za-z]{1,60}$"`
	ApprovalID *string `json:"approvalId,omitempty" doc:"The approved approval the quote asked for"`
}

// MaxShownBytes bounds what a signature may sign (the typed data as compact
// JSON, the message as sent), because its approver must see all of it: an
// approval is listed a hundred to a page, and a 64 KiB document in each
// would make pages of megabytes. A larger request is refused rather than
// shown in part, since a part shown beside a digest that binds the rest
// hides what is signed.
const MaxShownBytes = 16 << 10

// sigRequest is a signature quote's request, parsed: what is signed, what
// the policy sees of it, and what its approver is shown.
type sigRequest struct {
	digest    common.Hash
	intent    policy.Intent
	transfers []policy.Transfer
	shown     []SigTransfer
	payload   map[string]any
}

// parseSigRequest reads a signature request. Known transfer-shaped typed
// data becomes the transfers the policy counts, each token named by its
// symbol when the domain's chain is configured and knows it.
func (s *Service) parseSigRequest(req SigQuoteRequest) (*sigRequest, error) {
	out := &sigRequest{intent: policy.Intent{Operation: policy.OpSignaturesCreate, SignatureType: req.Type}, shown: []SigTransfer{}}
	switch req.Type {
	case policy.SignaturePersonal:
		if req.Message == nil || req.TypedData != nil {
			return nil, apierr.Invalid("Invalid personal_sign request.", apierr.Field("body.message", "personal_sign takes message (and encoding), not typedData"))
		}
		enc := signing.EncodingUTF8
		if req.Encoding != nil {
			enc = *req.Encoding
		}
		msg, err := signing.DecodeMessage(*req.Message, enc)
		if err != nil {
			return nil, err
		}
		out.digest = signing.PersonalDigest(msg)
		if n := len(*req.Message); n > MaxShownBytes {
			return nil, apierr.Invalid("The message is too large to show its approver.", apierr.Field("body.message",
				"%d bytes; at most %d, so that whoever approves it reads all of it", n, MaxShownBytes))
		}
		out.payload = map[string]any{"encoding": enc, "message": *req.Message}
	case policy.SignatureEIP712:
		if req.TypedData == nil || req.Message != nil || req.Encoding != nil {
			return nil, apierr.Invalid("Invalid eip712 request.", apierr.Field("body.typedData", "eip712 takes typedData, not message"))
		}
		digest, td, err := signing.TypedDataDigest(req.TypedData)
		if err != nil {
			return nil, err
		}
		out.digest = digest
		transfers, err := signing.Transfers(td)
		if err != nil {
			return nil, err
		}
		d := &policy.Domain{Name: td.Domain.Name}
		if vc := td.Domain.VerifyingContract; common.IsHexAddress(vc) {
			a := common.HexToAddress(vc)
			d.VerifyingContract = &a
		}
		out.intent.Domain = d
		if c := (*big.Int)(td.Domain.ChainId); c != nil && c.IsUint64() {
			out.intent.ChainID = c.Uint64()
		}
		for _, t := range transfers {
			out.transfers = append(out.transfers, s.policyTransfer(t))
			out.shown = append(out.shown, s.shownTransfer(t))
		}
		if out.payload, err = shownTypedData(req.TypedData); err != nil {
			return nil, err
		}
	default:
		return nil, apierr.Invalid("Invalid type.", apierr.Field("body.type", "personal_sign or eip712"))
	}
	return out, nil
}

// assetOf is the symbol of a transfer's token on its domain's chain; ""
// when either is unknown (a zero token is never the native coin).
func (s *Service) assetOf(t signing.Transfer) string {
	if t.ChainID == nil || !t.ChainID.IsUint64() || t.Token == (common.Address{}) {
		return ""
	}
	n, ok := s.nets.Get(t.ChainID.Uint64())
	if !ok {
		return ""
	}
	a, ok := n.AssetAt(t.Token)
	if !ok {
		return ""
	}
	return a.Symbol
}

func (s *Service) policyTransfer(t signing.Transfer) policy.Transfer {
	return policy.Transfer{Token: t.Token, Recipient: t.Recipient, Asset: s.assetOf(t), Amount: t.Amount}
}

func (s *Service) shownTransfer(t signing.Transfer) SigTransfer {
	out := SigTransfer{Kind: t.Kind, Token: t.Token.Hex(), Recipient: t.Recipient.Hex(), Amount: t.Amount.String()}
	if t.ChainID != nil && t.ChainID.IsUint64() {
		id := t.ChainID.Uint64()
		out.ChainID = &id
	}
	if a := s.assetOf(t); a != "" {
		out.Asset = &a
	}
	return out
}

// shownTypedData is what an approval shows of typed data: all of it
// (types, primaryType, domain, message), or a refusal when that is more
// than MaxShownBytes.
func shownTypedData(raw json.RawMessage) (map[string]any, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, apierr.Invalid("Invalid EIP-712 typed data.", apierr.Field("body.typedData", "%v", err))
	}
	if compact.Len() > MaxShownBytes {
		return nil, apierr.Invalid("The typed data is too large to show its approver.", apierr.Field("body.typedData",
			"%d bytes as compact JSON; at most %d, so that whoever approves it reads all of it", compact.Len(), MaxShownBytes))
	}
	return map[string]any{"typedData": json.RawMessage(compact.Bytes())}, nil
}

// sigApprovalInput is what a signature's approval is bound to and shows its
// approver: the quote, the digest, the transfers the policy counted and
// the decoded message (typedData: domain, primaryType, types, message; or
// the personal_sign message).
func sigApprovalInput(q *SigQuote, r *sigRequest) json.RawMessage {
	in := map[string]any{"walletId": q.WalletID, "quoteId": q.ID, "type": q.Type, "digest": q.Digest, "transfers": r.shown}
	for k, v := range r.payload {
		in[k] = v
	}
	b, _ := json.Marshal(in)
	return b
}

// QuoteSignature computes the digest and the policy's decision; when the
// policy requires approval, it requests the approval now.
func (s *Service) QuoteSignature(ctx context.Context, sc Scope, walletID string, req SigQuoteRequest, requester string) (*SigQuote, error) {
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, err
	}
	r, err := s.parseSigRequest(req)
	if err != nil {
		return nil, err
	}
	now := s.now()
	d := policy.EvaluateSignature(l.policy, r.intent, r.transfers, l.history(), now)
	q := &SigQuote{ID: ids.New("wsq", now), WalletID: walletID, Type: req.Type, Digest: r.digest.Hex(), Transfers: r.shown,
		Policy: PolicyPreview{Decision: d.Action, Reason: d.Reason}, ExpiresAt: now.Add(SigQuoteTTL).Truncate(time.Second), CreatedAt: now}
	if d.Action == policy.ActionDeny {
		return nil, apierr.New(apierr.PolicyDenied, "The wallet's policy denies this signature: %s.", d.Reason)
	}
	if d.Action == policy.ActionRequireApproval {
		a, err := s.createApproval(ctx, sc, requester, ServiceID, OpSignaturesCreate, sigApprovalInput(q, r))
		if err != nil {
			return nil, err
		}
		q.ApprovalID, q.ExpiresAt = &a.ID, a.ExpiresAt
	}
	it := store.NewItem(sc.key("wsq", q.ID))
	it.SetDoc(q)
	it["request"] = store.DocOf(req)
	it["validUntil"] = q.ExpiresAt.UnixMilli()
	it[store.AttrExpiresAt] = q.ExpiresAt.Add(24 * time.Hour).Unix()
	if err := s.st.Put(ctx, it, store.NotExists()); err != nil {
		return nil, fmt.Errorf("wallets: store signature quote: %w", err)
	}
	return q, nil
}

// CreateSignature signs a quote's digest, once: the policy decides again
// (a deny since the quote refuses), an approval it requires is consumed,
// and the quote records the signature, so a retry of the same call gets
// the same signature and any other call 409 quote_already_used. The
// transfers the message authorises are reserved in the wallet's spends in
// the same write (conditional on the wallet's revision, as a send's are),
// so rolling totals count a permit like the send it allows; they are never
// given back, since a signature cannot be taken back.
func (s *Service) CreateSignature(ctx context.Context, sc Scope, walletID string, req SigCreateRequest, callID string) (*WalletSignature, error) {
	var undo func(context.Context) error
	for attempt := 0; attempt < 64; attempt++ {
		out, retry, err := s.trySign(ctx, sc, walletID, req, callID, &undo)
		if !retry {
			return out, err
		}
	}
	return nil, s.giveBack(ctx, undo, apierr.New(apierr.Conflict, "The wallet is busy with concurrent sends; retry.").WithHeader("Retry-After", "1"))
}

func (s *Service) trySign(ctx context.Context, sc Scope, walletID string, req SigCreateRequest, callID string, undo *func(context.Context) error) (*WalletSignature, bool, error) {
	fail := func(err error) (*WalletSignature, bool, error) { return nil, false, s.giveBack(ctx, *undo, err) }
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return fail(err)
	}
	it, err := s.st.Get(ctx, sc.key("wsq", req.QuoteID))
	var q SigQuote
	if err == nil {
		err = it.Doc(&q)
	}
	if errors.Is(err, store.ErrNotFound) || err == nil && q.WalletID != walletID {
		return fail(apierr.Invalid("Unknown quote.", apierr.Field("body.quoteId", "no such signature quote for this wallet")))
	}
	if err != nil {
		return fail(fmt.Errorf("wallets: read signature quote: %w", err))
	}
	if it.String("used") != "" {
		var done WalletSignature
		if it.String("usedBy") == callID && json.Unmarshal(it.Bytes("signature"), &done) == nil {
			return &done, false, nil
		}
		return fail(errQuoteUsed)
	}
	now := s.now()
	if !now.Before(q.ExpiresAt) {
		return fail(errQuoteExpired)
	}
	var sreq SigQuoteRequest
	if err := json.Unmarshal(it.Bytes("request"), &sreq); err != nil {
		return fail(fmt.Errorf("wallets: read signature request: %w", err))
	}
	r, err := s.parseSigRequest(sreq)
	if err != nil || r.digest.Hex() != q.Digest {
		return fail(fmt.Errorf("wallets: signature quote %s no longer parses to its digest: %v", q.ID, err))
	}
	d := policy.EvaluateSignature(l.policy, r.intent, r.transfers, l.history(), now)
	switch d.Action {
	case policy.ActionDeny:
		return fail(apierr.New(apierr.PolicyDenied, "The wallet's policy denies this signature: %s.", d.Reason))
	case policy.ActionRequireApproval:
		if *undo == nil {
			id := q.ApprovalID
			if req.ApprovalID != nil {
				id = req.ApprovalID
			}
			if id == nil {
				return fail(apierr.New(apierr.ApprovalRequired, "The wallet's policy requires an approval for this signature; quote again to request one."))
			}
			if *undo, err = s.approvals.Consume(ctx, sc.AccountID, sc.ProjectID, *id, ServiceID, OpSignaturesCreate, sigApprovalInput(&q, r)); err != nil {
				return nil, false, err
			}
		}
	}
	key, err := s.openKeyOf(ctx, l)
	if err != nil {
		return fail(err)
	}
	sig, err := signing.Sign(key, r.digest)
	zero(key)
	if err != nil {
		return fail(err)
	}
	out := &WalletSignature{ID: ids.New("sig", now), WalletID: walletID, Type: q.Type, Digest: q.Digest, Signature: "0x" + common.Bytes2Hex(sig),
		Address: l.rec.Address, CreatedAt: now}
	ops := []store.Op{store.UpdateOp(it.Key(), store.Update{Set: map[string]any{"used": out.ID, "usedBy": callID, "signature": store.DocOf(out)}},
		store.AttrNotExists("used"), store.NumAtLeast("validUntil", now.UnixMilli()+1))}
	if spends := reserved(r.transfers, now, out.ID); len(spends) > 0 {
		ops = append(ops, store.UpdateOp(l.item.Key(), store.Update{Set: map[string]any{"spends": store.DocOf(append(pruneSpends(l.spends, now), spends...)), "rev": l.rev + 1}},
			store.AttrEquals("rev", l.rev)))
	}
	var evs events
	if err := s.add(&evs, sc.AccountID, sc.ProjectID, "wallet.signature.created", out); err != nil {
		return fail(err)
	}
	ops = append(ops, evs.ops...)
	err = s.st.Transact(ctx, ops)
	var tx *store.TxError
	switch {
	case errors.As(err, &tx) && tx.Index == 1:
		return nil, true, nil
	case errors.As(err, &tx) && tx.Index == 0:
		return fail(errQuoteUsed)
	case err != nil:
		return fail(fmt.Errorf("wallets: record signature: %w", err))
	}
	evs.send(ctx)
	return out, false, nil
}

// reserved are the spends a signature's transfers of known tokens add.
func reserved(transfers []policy.Transfer, now time.Time, sigID string) []spend {
	var out []spend
	for _, t := range transfers {
		if t.Asset != "" {
			out = append(out, spend{Asset: t.Asset, Amount: t.Amount.String(), At: now, TxID: sigID})
		}
	}
	return out
}

// giveBack returns a consumed approval when what it was consumed for did
// not happen.
func (s *Service) giveBack(ctx context.Context, undo func(context.Context) error, cause error) error {
	if undo != nil {
		if err := undo(context.WithoutCancel(ctx)); err != nil {
			s.log.Error("wallets: give back an approval", "error", err.Error())
		}
	}
	return cause
}
