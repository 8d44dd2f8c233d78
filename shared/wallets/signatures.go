package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/apierr"
	"platformapi/shared/ids"
	"platformapi/shared/store"
	"platformapi/shared/wallets/policy"
	"platformapi/shared/wallets/signing"
)

// SigQuoteRequest is the body of POST /wallets/{id}/signatures/quote.
type SigQuoteRequest struct {
	Type      string          `json:"type" enum:"personal_sign,eip712" doc:"personal_sign (EIP-191) or eip712 (typed data); there is no raw-hash signing"`
	Message   *string         `json:"message,omitempty" doc:"personal_sign: the message, at most 64 KiB"`
	Encoding  *string         `json:"encoding,omitempty" enum:"utf8,hex" doc:"personal_sign: how message is written (utf8 by default; hex is 0x-prefixed bytes)"`
	TypedData json.RawMessage `json:"typedData,omitempty" doc:"eip712: {types, primaryType, domain, message}, at most 64 KiB"`
}

// SigQuote is a quoted signature: the digest that will be signed.
type SigQuote struct {
	ID         string        `json:"id" example:"wsq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID   string        `json:"walletId"`
	Type       string        `json:"type" enum:"personal_sign,eip712"`
	Digest     string        `json:"digest" doc:"The 32-byte hash that will be signed" example:"0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2"`
	Policy     PolicyPreview `json:"policy"`
	ApprovalID *string       `json:"approvalId" doc:"When the policy requires approval: the approval, requested now, that another key must approve before POST /signatures"`
	ExpiresAt  time.Time     `json:"expiresAt" doc:"5 minutes ahead, or the approval's expiry when one is required"`
	CreatedAt  time.Time     `json:"createdAt"`
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

func sigApprovalInput(q *SigQuote) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"walletId": q.WalletID, "quoteId": q.ID, "type": q.Type, "digest": q.Digest})
	return b
}

// QuoteSignature computes the digest and the policy's decision; when the
// policy requires approval, it requests the approval now.
func (s *Service) QuoteSignature(ctx context.Context, sc Scope, walletID string, req SigQuoteRequest, requester string) (*SigQuote, error) {
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, err
	}
	var digest common.Hash
	switch req.Type {
	case policy.SignaturePersonal:
		if req.Message == nil || req.TypedData != nil {
			return nil, apierr.Invalid("Invalid personal_sign request.", apierr.Field("body.message", "personal_sign takes message (and encoding), not typedData"))
		}
		enc := ""
		if req.Encoding != nil {
			enc = *req.Encoding
		}
		msg, err := signing.DecodeMessage(*req.Message, enc)
		if err != nil {
			return nil, err
		}
		digest = signing.PersonalDigest(msg)
	case policy.SignatureEIP712:
		if req.TypedData == nil || req.Message != nil || req.Encoding != nil {
			return nil, apierr.Invalid("Invalid eip712 request.", apierr.Field("body.typedData", "eip712 takes typedData, not message"))
		}
		digest, _, err = signing.TypedDataDigest(req.TypedData)
		if err != nil {
			return nil, err
		}
	default:
		return nil, apierr.Invalid("Invalid type.", apierr.Field("body.type", "personal_sign or eip712"))
	}
	now := s.now()
	d := policy.Evaluate(l.policy, policy.Intent{Operation: policy.OpSignaturesCreate, SignatureType: req.Type}, nil, now)
	q := &SigQuote{ID: ids.New("wsq", now), WalletID: walletID, Type: req.Type, Digest: digest.Hex(),
		Policy: PolicyPreview{Decision: d.Action, Reason: d.Reason}, ExpiresAt: now.Add(SigQuoteTTL).Truncate(time.Second), CreatedAt: now}
	if d.Action == policy.ActionDeny {
		return nil, apierr.New(apierr.PolicyDenied, "The wallet's policy denies this signature: %s.", d.Reason)
	}
	if d.Action == policy.ActionRequireApproval {
		a, err := s.approvals.Create(ctx, sc.AccountID, projectPtr(sc), requester, ServiceID, OpSignaturesCreate, sigApprovalInput(q))
		if err != nil {
			return nil, err
		}
		q.ApprovalID, q.ExpiresAt = &a.ID, a.ExpiresAt
		s.publishApproval(ctx, sc, a)
	}
	it := store.NewItem(sc.key("wsq", q.ID))
	it.SetDoc(q)
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
// the same signature and any other call 409 quote_already_used.
func (s *Service) CreateSignature(ctx context.Context, sc Scope, walletID string, req SigCreateRequest, callID string) (*WalletSignature, error) {
	l, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, err
	}
	it, err := s.st.Get(ctx, sc.key("wsq", req.QuoteID))
	var q SigQuote
	if err == nil {
		err = it.Doc(&q)
	}
	if errors.Is(err, store.ErrNotFound) || err == nil && q.WalletID != walletID {
		return nil, apierr.Invalid("Unknown quote.", apierr.Field("body.quoteId", "no such signature quote for this wallet"))
	}
	if err != nil {
		return nil, fmt.Errorf("wallets: read signature quote: %w", err)
	}
	if it.String("used") != "" {
		var done WalletSignature
		if it.String("usedBy") == callID && json.Unmarshal(it.Bytes("signature"), &done) == nil {
			return &done, nil
		}
		return nil, errQuoteUsed
	}
	now := s.now()
	if !now.Before(q.ExpiresAt) {
		return nil, errQuoteExpired
	}
	d := policy.Evaluate(l.policy, policy.Intent{Operation: policy.OpSignaturesCreate, SignatureType: q.Type}, nil, now)
	var undo func(context.Context) error
	switch d.Action {
	case policy.ActionDeny:
		return nil, apierr.New(apierr.PolicyDenied, "The wallet's policy denies this signature: %s.", d.Reason)
	case policy.ActionRequireApproval:
		id := q.ApprovalID
		if req.ApprovalID != nil {
			id = req.ApprovalID
		}
		if id == nil {
			return nil, apierr.New(apierr.ApprovalRequired, "The wallet's policy requires an approval for this signature; quote again to request one.")
		}
		undo, err = s.approvals.Consume(ctx, sc.AccountID, sc.ProjectID, *id, ServiceID, OpSignaturesCreate, sigApprovalInput(&q))
		if err != nil {
			return nil, err
		}
	}
	key, err := s.openKeyOf(ctx, l)
	if err != nil {
		return nil, s.giveBack(ctx, undo, err)
	}
	sig, err := signing.Sign(key, common.HexToHash(q.Digest))
	zero(key)
	if err != nil {
		return nil, s.giveBack(ctx, undo, err)
	}
	out := &WalletSignature{ID: ids.New("sig", now), WalletID: walletID, Type: q.Type, Digest: q.Digest, Signature: "0x" + common.Bytes2Hex(sig),
		Address: l.rec.Address, CreatedAt: now}
	_, err = s.st.Update(ctx, it.Key(), store.Update{Set: map[string]any{"used": out.ID, "usedBy": callID, "signature": store.DocOf(out)}},
		store.AttrNotExists("used"), store.NumAtLeast("validUntil", now.UnixMilli()+1))
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, s.giveBack(ctx, undo, errQuoteUsed)
	}
	if err != nil {
		return nil, s.giveBack(ctx, undo, fmt.Errorf("wallets: record signature: %w", err))
	}
	if s.events != nil {
		if perr := s.events.Publish(context.WithoutCancel(ctx), sc.AccountID, sc.ProjectID, "wallet.signature.created", out); perr != nil {
			s.log.Error("wallets: publish", "signature", out.ID, "error", perr.Error())
		}
	}
	return out, nil
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
