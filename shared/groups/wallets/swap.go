package wallets

import (
	"context"
	"encoding/json"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/wallets/policy"
)

// Purposes of a swap's transactions.
const (
	PurposeSwapApproval = "swap_approval"
	PurposeSwap         = "swap"
)

// SwapCall is one transaction of a swap, sent after the one before it
// confirmed (a swap spends what its approval allowed).
type SwapCall struct {
	Purpose string
	To      common.Address
	Value   *big.Int
	Data    []byte
	// Gas is the router's limit (0: none), shown until the call is signed;
	// it is estimated again then, once the call before it is mined.
	Gas uint64
	// Shown on the wallet transaction: the token and amount it concerns.
	Asset  string
	Amount *big.Int
	// Recipient is shown as the transaction's to (the spender of an
	// approval, the router of a swap).
	Recipient common.Address
}

// SwapSend is a swap's execution from a wallet: its calls, the policy
// intent (operation swaps.execute) and what the swap reserves and costs.
type SwapSend struct {
	SwapID  string
	ChainID uint64
	Calls   []SwapCall
	Intent  policy.Intent
	// ApprovalService, ApprovalInput bind an approval a require_approval
	// rule asks for; ApprovalID names one already approved.
	ApprovalService string
	ApprovalInput   json.RawMessage
	ApprovalID      *string
	// CreditsMicro is held on the last call, captured when it confirms.
	CreditsMicro int64
	// QuoteKey is the swap quote, marked used by the swap in the same
	// transaction (conditional: unused and unexpired).
	QuoteKey store.Key
	// Records are the swap's own items (its record and its event) for the
	// given transactions and first status, committed with them.
	Records   func(txs []*WalletTransaction, status string) ([]store.Op, error)
	Requester string
	CallID    string
}

// SendForSwap decides the policy on a swap and commits its transactions,
// reservation, hold, quote use and records in one transaction: the
// wallet's policy and approvals apply to swaps.execute. It returns the
// transactions and the swap's first status: pending_approval or pending.
func (s *Service) SendForSwap(ctx context.Context, sc Scope, walletID string, sw SwapSend) ([]*WalletTransaction, string, error) {
	var requested *approvals.Approval // requested once, whatever the attempts
	races := 0
	for attempt := 0; attempt <= 64; attempt++ {
		txs, status, retry, err := s.trySwap(ctx, sc, walletID, sw, &requested, &races)
		if !retry {
			return txs, status, err
		}
	}
	return nil, "", apierr.New(apierr.Conflict, "The wallet is busy with concurrent sends; retry.").WithHeader("Retry-After", "1")
}

func (s *Service) trySwap(ctx context.Context, sc Scope, walletID string, sw SwapSend, requested **approvals.Approval, races *int) ([]*WalletTransaction, string, bool, error) {
	w, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, "", false, err
	}
	now := s.now()
	d := policy.Evaluate(w.policy, sw.Intent, w.history(), now)
	first := StatusQueued
	var approvalID *string
	var undo func(context.Context) error
	switch d.Action {
	case policy.ActionDeny:
		return nil, "", false, apierr.New(apierr.PolicyDenied, "The wallet's policy denies this swap: %s. Nothing was created.", d.Reason)
	case policy.ActionRequireApproval:
		if sw.ApprovalID == nil {
			a, err := s.requestApproval(ctx, sc, requested, sw.Requester, sw.ApprovalService, "swaps.execute", sw.ApprovalInput)
			if err != nil {
				return nil, "", false, err
			}
			first, approvalID = StatusPendingApproval, &a.ID
		} else {
			undo, err = s.approvals.Consume(ctx, sc.AccountID, sc.ProjectID, *sw.ApprovalID, sw.ApprovalService, "swaps.execute", sw.ApprovalInput)
			if err != nil {
				return nil, "", false, err
			}
			approvalID = sw.ApprovalID
		}
	}
	var txs []*txRec
	for i, c := range sw.Calls {
		t := &txRec{WalletTransaction: WalletTransaction{ID: ids.New("wtx", now), WalletID: walletID, Purpose: c.Purpose, SwapID: &sw.SwapID,
			ChainID: sw.ChainID, To: c.Recipient.Hex(), Asset: c.Asset, Amount: c.Amount.String(), Status: StatusQueued,
			NetworkFee: NetworkFee{Asset: "ETH", GasLimit: c.Gas}, CreatedAt: now, UpdatedAt: now},
			AccountID: sc.AccountID, ProjectID: sc.ProjectID, From: w.rec.Address, CallTo: c.To.Hex(), CallValue: c.Value.String(),
			CallData: hexutil.Encode(c.Data), Gas: c.Gas, Deadline: now.Add(SubmitDeadline)}
		if i == 0 {
			t.Status, t.ApprovalID = first, approvalID
		} else {
			t.After = txs[i-1].ID
		}
		txs = append(txs, t)
	}
	last := txs[len(txs)-1]
	if sw.CreditsMicro > 0 {
		last.HoldID, last.Credits = ids.New("hold", now), sw.CreditsMicro
	}
	views := make([]*WalletTransaction, len(txs))
	for i, t := range txs {
		views[i] = t.view()
	}
	status := "pending"
	if first == StatusPendingApproval {
		status = StatusPendingApproval
	}
	records, err := sw.Records(views, status)
	if err != nil {
		return nil, "", false, s.giveBack(ctx, undo, err)
	}
	sd := &send{sc: sc, w: w, txs: txs, spend: &spend{Asset: sw.Intent.Asset, Amount: sw.Intent.Amount.String(), At: now, TxID: last.ID},
		quoteKey: &sw.QuoteKey, quoteUsed: sw.SwapID, callID: sw.CallID, extra: records, races: races}
	evs, retry, err := s.commitSend(ctx, sd)
	if err != nil || retry {
		return nil, "", retry, s.giveBack(ctx, undo, err)
	}
	evs.send(ctx)
	for _, t := range txs {
		if t.Status == StatusQueued {
			s.enqueue(ctx, t, 0) // one waiting for its predecessor polls it
		}
	}
	return views, status, false, nil
}

// SwapTransactions reads a swap's transactions (advanced first, as a read
// of each would).
func (s *Service) SwapTransactions(ctx context.Context, sc Scope, walletID string, txIDs []string) ([]*WalletTransaction, error) {
	out := make([]*WalletTransaction, 0, len(txIDs))
	for _, id := range txIDs {
		t, err := s.GetTransaction(ctx, sc, walletID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// SwapCharged is the credits the swap whose last transaction is id was
// charged (0 until it confirms): its transactions show 0 themselves.
func (s *Service) SwapCharged(ctx context.Context, sc Scope, walletID, id string) (json.Number, error) {
	t, err := s.loadTx(ctx, sc, walletID, id)
	if err != nil {
		return "", err
	}
	return json.Number(decimal.Format(t.Charged, 6)), nil
}

// PeekTransaction reads a transaction as stored, without advancing it
// (what the swaps service reads when it is told a transaction moved).
func (s *Service) PeekTransaction(ctx context.Context, sc Scope, walletID, id string) (*WalletTransaction, error) {
	t, err := s.loadTx(ctx, sc, walletID, id)
	if err != nil {
		return nil, err
	}
	return t.view(), nil
}
