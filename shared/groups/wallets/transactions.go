package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/decimal"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/wallets/policy"
)

// Transaction states (docs/wallets.md): pending_approval → queued → submitted →
// confirmed | failed, or rejected (its approval was) / expired (it never
// got to the chain in time).
const (
	StatusPendingApproval = "pending_approval"
	StatusQueued          = "queued"
	StatusSubmitted       = "submitted"
	StatusConfirmed       = "confirmed"
	StatusFailed          = "failed"
	StatusRejected        = "rejected"
	StatusExpired         = "expired"
)

// Credit and reservation actions a final transition leaves to settle.
const (
	settleCapture = "capture"
	settleRelease = "release"
)

// TxFailure says why a transaction failed.
type TxFailure struct {
	Code   string `json:"code" enum:"simulation_failed,reverted,broadcast_rejected,predecessor_failed" example:"reverted"`
	Reason string `json:"reason" example:"ERC20: transfer amount exceeds balance"`
}

// Transaction is the record clients see.
type WalletTransaction struct {
	ID             string      `json:"id" example:"wtx_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID       string      `json:"walletId" example:"wal_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	Status         string      `json:"status" enum:"pending_approval,queued,submitted,confirmed,failed,rejected,expired" example:"confirmed"`
	Purpose        string      `json:"purpose" enum:"send,swap_approval,swap" doc:"send: a transaction quote's; swap_approval and swap: a swap's (swapId)" example:"send"`
	SwapID         *string     `json:"swapId"`
	QuoteID        *string     `json:"quoteId"`
	ApprovalID     *string     `json:"approvalId" doc:"The approval a require_approval rule asked for; decided by a key other than the requester"`
	Hash           *string     `json:"hash" doc:"Set once signed; the same on every rebroadcast"`
	Nonce          *uint64     `json:"nonce"`
	ChainID        uint64      `json:"chainId" example:"1337"`
	To             string      `json:"to" doc:"The recipient (for a token, the token's recipient)" example:"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"`
	Asset          string      `json:"asset" example:"USDC"`
	Amount         string      `json:"amount" doc:"Base units" example:"1500000"`
	NetworkFee     NetworkFee  `json:"networkFee"`
	BlockNumber    *uint64     `json:"blockNumber"`
	ChargedCredits json.Number `json:"chargedCredits" doc:"Credits charged: the operation's price once confirmed, 0 otherwise; always 0 on a swap's transactions, whose swap (swapId) carries the charge" example:"0.1"`
	Failure        *TxFailure  `json:"failure"`
	CreatedAt      time.Time   `json:"createdAt"`
	UpdatedAt      time.Time   `json:"updatedAt"`
}

// txRec is a transaction as stored.
type txRec struct {
	WalletTransaction
	AccountID string    `json:"accountId"`
	ProjectID string    `json:"projectId"`
	From      string    `json:"from"`
	CallTo    string    `json:"callTo"`
	CallValue string    `json:"callValue"`
	CallData  string    `json:"callData"`
	Gas       uint64    `json:"gas"`
	Raw       string    `json:"raw,omitempty"` // the signed transaction, once signed
	Filler    string    `json:"filler,omitempty"`
	After     string    `json:"after,omitempty"` // a transaction that must confirm first
	HoldID    string    `json:"holdId,omitempty"`
	Credits   int64     `json:"credits"`
	Charged   int64     `json:"charged"`
	Settle    string    `json:"settle,omitempty"` // settleCapture / settleRelease still to do
	Reserved  bool      `json:"reserved"`         // the amount is in the wallet's spends
	Deadline  time.Time `json:"deadline"`
	// commitWith are writes that stand or fall with this version of the
	// record: transition commits them in its transaction. Never stored.
	commitWith []store.Op
}

// holdDeadline is when t's credit hold is settled at the latest if its
// process lives: its first submit deadline (an approval's expiry, or an
// hour) plus the confirmation watch. It never moves: the hold's sweeper
// index is keyed by it.
func (t *txRec) holdDeadline() time.Time {
	return t.CreatedAt.Add(approvals.TTL + SubmitDeadline + ConfirmDeadline)
}

func (t *txRec) scope() Scope { return Scope{AccountID: t.AccountID, ProjectID: t.ProjectID} }

func (t *txRec) final() bool {
	switch t.Status {
	case StatusConfirmed, StatusFailed, StatusRejected, StatusExpired:
		return true
	}
	return false
}

func txKey(sc Scope, walletID, id string) store.Key { return sc.key("wtx", walletID+"#"+id) }

func encodeTx(t *txRec, rev int64) store.Item {
	it := store.NewItem(txKey(t.scope(), t.WalletID, t.ID))
	it.SetDoc(t)
	it["rev"] = rev
	it["status"] = t.Status
	return it
}

func decodeTx(it store.Item) (*txRec, int64, error) {
	var t txRec
	if err := it.Doc(&t); err != nil {
		return nil, 0, fmt.Errorf("wallets: decode transaction: %w", err)
	}
	return &t, it.Int("rev"), nil
}

func openOp(t *txRec) store.Op {
	it := store.NewItem(openKey(t.ID))
	it["acct"], it["project"], it["wallet"] = t.AccountID, t.ProjectID, t.WalletID
	return store.PutOp(it)
}

// view shows a swap's transactions as charging nothing: the swap is
// charged once, on the swap (the hold only rides on its last transaction).
func (t *txRec) view() *WalletTransaction {
	v := t.WalletTransaction
	v.ChargedCredits = "0"
	if t.SwapID == nil {
		v.ChargedCredits = json.Number(decimal.Format(t.Charged, 6))
	}
	return &v
}

// WalletCreateRequest of a transaction.
type TxCreateRequest struct {
	QuoteID    string  `json:"quoteId" pattern:"^wtq_[0-9A-Za-z]{1,60}$" doc:"A quote of this wallet, unexpired and unused" example:"wtq_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	ApprovalID *string `json:"approvalId,omitempty" doc:"An approved approval for this quote, when the policy requires one and it was decided before this call"`
}

var (
	errQuoteUsed    = apierr.New(apierr.QuoteAlreadyUsed, "This quote was already executed; quote again.")
	errQuoteExpired = apierr.New(apierr.QuoteExpired, "This quote expired; quote again.")
	errNoCredits    = apierr.New(apierr.InsufficientCredits, "The account's credits cannot cover this transaction.")
)

// send is what commitSend writes.
type send struct {
	sc       Scope
	w        *loaded
	txs      []*txRec
	spend    *spend
	quoteKey *store.Key
	// quoteUsed is what the quote is marked used by (the transaction, or
	// the swap); callID the call that used it.
	quoteUsed string
	callID    string
	// extra are the caller's own records, committed with the send.
	extra []store.Op
	// races counts the call's attempts that lost the balance's race.
	races *int
}

// approvalInput is what a send's approval is bound to: the quote's intent.
func approvalInput(q *TxQuote) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"walletId": q.WalletID, "quoteId": q.ID, "chainId": q.ChainID, "to": q.To, "asset": q.Asset, "amount": q.Amount})
	return b
}

// CreateTransaction executes a quote: the policy decides again
// on the current policy and spends; deny creates nothing; require_approval
// creates the transaction in pending_approval with an approval another key
// must decide; a rolling total is reserved in the transaction that creates
// the send. callID names the call (caller and Idempotency-Key): a retry of
// the same call finds the transaction its first attempt created.
func (s *Service) CreateTransaction(ctx context.Context, sc Scope, walletID string, req TxCreateRequest, requester, callID string) (*WalletTransaction, bool, error) {
	var requested *approvals.Approval // requested once, whatever the attempts
	races := 0
	for attempt := 0; ; attempt++ {
		t, replay, retry, err := s.tryCreate(ctx, sc, walletID, req, requester, callID, &requested, &races)
		if !retry || attempt >= 64 {
			if retry {
				return nil, false, apierr.New(apierr.Conflict, "The wallet is busy with concurrent sends; retry.").WithHeader("Retry-After", "1")
			}
			return t, replay, err
		}
		time.Sleep(time.Duration(1+attempt%8) * time.Millisecond)
	}
}

func (s *Service) tryCreate(ctx context.Context, sc Scope, walletID string, req TxCreateRequest, requester, callID string, requested **approvals.Approval, races *int) (*WalletTransaction, bool, bool, error) {
	w, err := s.load(ctx, sc, walletID)
	if err != nil {
		return nil, false, false, err
	}
	q, qit, err := s.getTxQuote(ctx, sc, walletID, req.QuoteID)
	if err != nil {
		return nil, false, false, err
	}
	if used := qit.String("used"); used != "" {
		if qit.String("usedBy") == callID {
			t, err := s.replayed(ctx, sc, walletID, used)
			return t, true, false, err
		}
		return nil, false, false, errQuoteUsed
	}
	now := s.now()
	if !now.Before(q.ExpiresAt) {
		return nil, false, false, errQuoteExpired
	}
	if !q.Simulation.Success {
		return nil, false, false, apierr.New(apierr.SimulationFailed, "The quoted transaction would fail: %s. Nothing was sent.", deref(q.Simulation.RevertReason))
	}
	c, err := q.call()
	if err != nil {
		return nil, false, false, err
	}
	amount, _ := new(big.Int).SetString(q.Amount, 10)
	intent := policy.Intent{Operation: "transactions.create", ChainID: q.ChainID, To: c.To, Recipient: common.HexToAddress(q.To), Asset: q.Asset, Amount: amount}
	d := policy.Evaluate(w.policy, intent, w.history(), now)
	t := &txRec{WalletTransaction: WalletTransaction{ID: ids.New("wtx", now), WalletID: walletID, Purpose: "send", QuoteID: &q.ID, ChainID: q.ChainID,
		To: q.To, Asset: q.Asset, Amount: q.Amount, NetworkFee: q.NetworkFee, CreatedAt: now, UpdatedAt: now},
		AccountID: sc.AccountID, ProjectID: sc.ProjectID, From: w.rec.Address, CallTo: c.To.Hex(), CallValue: c.Value.String(),
		CallData: q.Transaction.Data, Gas: c.Gas, Credits: s.price, Deadline: now.Add(SubmitDeadline)}
	var undo func(context.Context) error
	switch d.Action {
	case "deny":
		return nil, false, false, apierr.New(apierr.PolicyDenied, "The wallet's policy denies this transaction: %s. Nothing was created.", d.Reason)
	case "require_approval":
		if req.ApprovalID == nil {
			a, err := s.requestApproval(ctx, sc, requested, requester, ServiceID, OpTransactionsCreate, approvalInput(q))
			if err != nil {
				return nil, false, false, err
			}
			t.Status, t.ApprovalID = StatusPendingApproval, &a.ID
			t.Deadline = a.ExpiresAt
		} else {
			undo, err = s.approvals.Consume(ctx, sc.AccountID, sc.ProjectID, *req.ApprovalID, ServiceID, OpTransactionsCreate, approvalInput(q))
			if err != nil {
				return nil, false, false, err
			}
			t.Status, t.ApprovalID = StatusQueued, req.ApprovalID
		}
	default:
		t.Status = StatusQueued
	}
	if t.Credits > 0 {
		t.HoldID = ids.New("hold", now)
	}
	sp := &spend{Asset: q.Asset, Amount: q.Amount, At: now, TxID: t.ID}
	qk := qit.Key()
	evs, retry, err := s.commitSend(ctx, &send{sc: sc, w: w, txs: []*txRec{t}, spend: sp, quoteKey: &qk, quoteUsed: t.ID, callID: callID, races: races})
	if err != nil || retry {
		if undo != nil {
			if uerr := undo(context.WithoutCancel(ctx)); uerr != nil {
				s.log.Error("wallets: give back an approval", "approval", *req.ApprovalID, "error", uerr.Error())
			}
		}
		if errors.Is(err, errQuoteUsed) {
			// A concurrent attempt of this same call may have won.
			if it, gerr := s.st.Get(ctx, qk); gerr == nil && it.String("usedBy") == callID {
				t, gerr := s.replayed(ctx, sc, walletID, it.String("used"))
				return t, true, false, gerr
			}
		}
		return nil, false, retry, err
	}
	evs.send(ctx)
	s.afterCommit(ctx, t)
	return t.view(), false, false, nil
}

// replayed returns the transaction an earlier attempt of this call
// created, to a retry: that attempt died before its answer was stored, its
// audit event, which carries the transaction's credit hold, written or
// not; the retry owes the hold to that event (Ledger.Inherit).
func (s *Service) replayed(ctx context.Context, sc Scope, walletID, id string) (*WalletTransaction, error) {
	if err := s.InheritHolds(ctx, sc, walletID, id); err != nil {
		return nil, err
	}
	return s.GetTransaction(ctx, sc, walletID, id)
}

// InheritHolds owes, for ctx's request, the credit holds of the wallet's
// transactions ids to the audit event of the earlier attempt of its call
// that created them (see replayed; a swap's retry calls it for the swap's
// transactions).
func (s *Service) InheritHolds(ctx context.Context, sc Scope, walletID string, ids ...string) error {
	for _, id := range ids {
		it, err := s.st.Get(ctx, txKey(sc, walletID, id))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wallets: read transaction: %w", err)
		}
		t, _, err := decodeTx(it)
		if err != nil {
			return err
		}
		if t.HoldID != "" {
			if err := s.ledger.Inherit(ctx, t.AccountID, t.HoldID, t.Credits); err != nil {
				return err
			}
		}
	}
	return nil
}

// requestApproval requests the approval a send needs, once per call: a
// retry after a concurrent change of the wallet reuses it.
func (s *Service) requestApproval(ctx context.Context, sc Scope, requested **approvals.Approval, requester, service, operation string, input json.RawMessage) (*approvals.Approval, error) {
	if *requested != nil {
		return *requested, nil
	}
	a, err := s.createApproval(ctx, sc, requester, service, operation, input)
	if err != nil {
		return nil, err
	}
	*requested = a
	return a, nil
}

// createApproval creates an approval with its approval.requested event in
// the same transaction.
func (s *Service) createApproval(ctx context.Context, sc Scope, requester, service, operation string, input json.RawMessage) (*approvals.Approval, error) {
	var evs events
	a, err := s.approvals.CreateWith(ctx, sc.AccountID, projectPtr(sc), requester, service, operation, input, func(a *approvals.Approval) ([]store.Op, error) {
		err := s.add(&evs, sc.AccountID, sc.ProjectID, "approval.requested", a)
		return evs.ops, err
	})
	if err != nil {
		return nil, err
	}
	evs.send(ctx)
	return a, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func projectPtr(sc Scope) *string {
	if sc.ProjectID == "" {
		return nil
	}
	p := sc.ProjectID
	return &p
}

// commitSend writes a send in one transaction: the wallet's spends (its
// revision unchanged since the policy was evaluated, so the decision and
// the reservation are of the same state), the quote marked used, the
// transactions, the credit hold, the open index and each transaction's
// first wallet.transaction.<status> event, which the caller sends once
// committed. retry means the
// wallet or the balance changed meanwhile: decide again. A balance that
// keeps changing first fails the call as the ledger's own changes fail,
// and slices the account (docs/credits.md, "Busy accounts: slices").
func (s *Service) commitSend(ctx context.Context, sd *send) (*events, bool, error) {
	now := s.now()
	spends := pruneSpends(sd.w.spends, now)
	if sd.spend != nil {
		spends = append(spends, *sd.spend)
		for _, t := range sd.txs {
			if t.ID == sd.spend.TxID {
				t.Reserved = true
			}
		}
	}
	ops := []store.Op{store.UpdateOp(sd.w.item.Key(), store.Update{Set: map[string]any{"spends": store.DocOf(spends), "rev": sd.w.rev + 1}},
		store.AttrEquals("rev", sd.w.rev))}
	iQuote := -1
	if sd.quoteKey != nil {
		iQuote = len(ops)
		ops = append(ops, store.UpdateOp(*sd.quoteKey, store.Update{Set: map[string]any{"used": sd.quoteUsed, "usedBy": sd.callID}},
			store.Exists(), store.AttrNotExists("used"), store.NumAtLeast("validUntil", now.UnixMilli()+1)))
	}
	for _, t := range sd.txs {
		ops = append(ops, store.PutOp(encodeTx(t, 1), store.NotExists()), openOp(t))
	}
	// One transaction of a send carries its credit hold (a swap's last).
	var hold *credits.Change
	for _, t := range sd.txs {
		if t.HoldID != "" {
			a, err := s.ledger.AccountFor(ctx, sd.sc.AccountID, t.Credits)
			var holdOps []store.Op
			if err == nil {
				holdOps, hold, err = credits.HoldOps(ctx, a, t.HoldID, t.Credits, "wallets "+t.ID, now, t.holdDeadline())
			}
			if errors.Is(err, credits.ErrInsufficient) {
				return nil, false, errNoCredits
			}
			if err != nil {
				return nil, false, err
			}
			ops = append(ops, holdOps...)
		}
	}
	ops = append(ops, sd.extra...)
	var evs events
	for _, t := range sd.txs {
		if err := s.add(&evs, t.AccountID, t.ProjectID, "wallet.transaction."+t.Status, t.view()); err != nil {
			return nil, false, err
		}
	}
	ops = append(ops, evs.ops...)
	err := s.st.Transact(ctx, ops)
	var tx *store.TxError
	switch {
	case err == nil:
		if hold != nil {
			hold.Committed()
		}
		return &evs, false, nil
	case !errors.As(err, &tx):
		return nil, false, fmt.Errorf("wallets: create transaction: %w", err)
	case tx.Index == 0:
		return nil, true, nil
	case tx.Index == iQuote:
		it, gerr := s.st.Get(ctx, *sd.quoteKey)
		if gerr == nil && it.String("used") != "" {
			return nil, false, errQuoteUsed
		}
		return nil, false, errQuoteExpired
	case credits.IsRace(err, ops, hold):
		err := s.ledger.Raced(ctx, sd.sc.AccountID, *sd.races)
		*sd.races++
		return nil, err == nil, err
	}
	return nil, false, fmt.Errorf("wallets: create transaction: %w", err)
}

// maxSpends bounds a wallet's spend list (its item stays far below
// DynamoDB's 400 KB): past it, the oldest two entries of an asset merge
// into one at the later time, which can only count a spend for longer, so
// a cap is never exceeded, though it may then refuse a little early.
const maxSpends = 2000

// spendRetention is the longest rolling window (policy's bound).
const spendRetention = 30 * 24 * time.Hour

func pruneSpends(in []spend, now time.Time) []spend {
	out := make([]spend, 0, len(in)+1)
	for _, sp := range in {
		if sp.At.After(now.Add(-spendRetention)) {
			out = append(out, sp)
		}
	}
	for len(out) >= maxSpends {
		merged := false
		for i := 1; i < len(out) && !merged; i++ {
			if out[i].Asset == out[0].Asset {
				a, _ := new(big.Int).SetString(out[0].Amount, 10)
				b, _ := new(big.Int).SetString(out[i].Amount, 10)
				out[i].Amount = new(big.Int).Add(a, b).String()
				out = out[1:]
				merged = true
			}
		}
		if !merged {
			out = append(out[:0:0], out[1:]...) // a lone oldest entry of its asset: keep the rest bounded
		}
	}
	return out
}

// afterCommit hands a queued transaction to the worker.
func (s *Service) afterCommit(ctx context.Context, t *txRec) {
	if t.Status == StatusQueued {
		s.enqueue(ctx, t, 0)
	}
}

// GetTransaction reads one of a wallet's transactions, advanced first (a
// decided approval, a mined receipt are seen at once).
func (s *Service) GetTransaction(ctx context.Context, sc Scope, walletID, id string) (*WalletTransaction, error) {
	if _, err := s.load(ctx, sc, walletID); err != nil {
		return nil, err
	}
	it, err := s.st.Get(ctx, txKey(sc, walletID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "No such transaction.")
	}
	if err != nil {
		return nil, fmt.Errorf("wallets: read transaction: %w", err)
	}
	t, rev, err := decodeTx(it)
	if err != nil {
		return nil, err
	}
	if !t.final() || t.Settle != "" {
		t, _ = s.advance(ctx, t, rev)
	}
	return t.view(), nil
}

// ListTransactions lists a wallet's transactions, newest first.
func (s *Service) ListTransactions(ctx context.Context, sc Scope, walletID string, limit int, cursor string) ([]*WalletTransaction, string, error) {
	if _, err := s.load(ctx, sc, walletID); err != nil {
		return nil, "", err
	}
	return paging.List(ctx, s.st, "acct#"+sc.AccountID, txKey(sc, walletID, "").SK, true, limit, cursor, func(it store.Item) (*WalletTransaction, string, error) {
		t, _, err := decodeTx(it)
		if err != nil {
			return nil, "", err
		}
		return t.view(), t.ID, nil
	})
}
