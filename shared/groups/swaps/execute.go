package swaps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/chain"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
	"platformapi/shared/groups/wallets"
	"platformapi/shared/groups/wallets/policy"
)

// Swap statuses, as clients read them (docs/swaps.md).
const (
	SwapPendingApproval = "pending_approval"
	SwapPending         = "pending"
	SwapDone            = "done"
	SwapFailed          = "failed"
)

// SwapTx is one of a swap's wallet transactions.
type SwapTx struct {
	Purpose       string  `json:"purpose" enum:"swap_approval,swap"`
	TransactionID string  `json:"transactionId" doc:"A wallet transaction: GET /wallets/{walletId}/transactions/{transactionId}"`
	Hash          *string `json:"hash"`
	Status        string  `json:"status" doc:"The wallet transaction's status"`
}

// Swap is a swap executed from a managed wallet.
type Swap struct {
	ID             string      `json:"id" example:"swp_01J9Z3K4M5N6P7Q8R9S0T1V2W3"`
	WalletID       string      `json:"walletId"`
	RouteID        string      `json:"routeId"`
	QuoteID        string      `json:"quoteId"`
	Status         string      `json:"status" enum:"pending_approval,pending,done,failed"`
	Substatus      *string     `json:"substatus" doc:"done: completed; failed: slippage_exceeded (the price moved beyond toAmountMin; only gas was spent), approval_rejected, expired, reverted, simulation_failed, broadcast_rejected"`
	ApprovalID     *string     `json:"approvalId" doc:"The approval a require_approval rule asked for (another key decides it)"`
	Transactions   []SwapTx    `json:"transactions"`
	FromChainID    uint64      `json:"fromChainId"`
	ToChainID      uint64      `json:"toChainId"`
	FromToken      string      `json:"fromToken"`
	ToToken        string      `json:"toToken"`
	FromAmount     string      `json:"fromAmount"`
	ToAmount       string      `json:"toAmount" doc:"The quoted output until done, then what the wallet received"`
	ToAmountMin    string      `json:"toAmountMin"`
	ChargedCredits json.Number `json:"chargedCredits" doc:"The swaps.execute price once done; 0 otherwise"`
	CreatedAt      time.Time   `json:"createdAt"`
	UpdatedAt      time.Time   `json:"updatedAt"`
}

// ExecuteRequest is the body of POST /swaps.
type ExecuteRequest struct {
	QuoteID    string  `json:"quoteId" doc:"A walletId-bound quote, unexpired and unused"`
	ApprovalID *string `json:"approvalId,omitempty" doc:"An approved approval, when the wallet's policy requires one and it was decided before this call"`
}

func encodeSwap(sc wallets.Scope, sw *Swap, rev int64) store.Item {
	it := store.NewItem(key(sc, "swp", sw.ID))
	it.SetDoc(sw)
	it["rev"] = rev
	it["status"] = sw.Status
	return it
}

// swapApprovalInput binds a swap's approval to its quote.
func swapApprovalInput(q *SwapQuote) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"walletId": *q.WalletID, "quoteId": q.ID, "fromChainId": q.FromChainID, "toChainId": q.ToChainID,
		"fromToken": q.FromToken, "toToken": q.ToToken, "fromAmount": q.FromAmount, "toAmountMin": q.ToAmountMin})
	return b
}

// Execute runs a wallet's quote: an exact-amount approval when the
// allowance is short, then the swap, as the wallet's transactions, under
// its policy (swaps.execute). The swap record, its transactions, the spend
// reservation, the credit hold and the quote's use commit together; the
// same call retried returns the same swap.
func (s *Service) Execute(ctx context.Context, sc wallets.Scope, req ExecuteRequest, requester, callID string) (*Swap, bool, error) {
	q, qit, rr, err := s.loadQuote(ctx, sc, req.QuoteID)
	if err != nil {
		return nil, false, err
	}
	if q.WalletID == nil {
		return nil, false, apierr.Invalid("This quote is for an address.", apierr.Field("body.quoteId", "build an address's quote with POST /swaps/prepare"))
	}
	if used := qit.String("used"); used != "" {
		if qit.String("usedBy") == callID {
			sw, err := s.replayed(ctx, sc, used)
			return sw, true, err
		}
		return nil, false, errQuoteUsed
	}
	now := s.now()
	if !now.Before(q.ExpiresAt) {
		return nil, false, errQuoteExpired
	}
	r := rr.Route
	n, ok := s.cfg.Wallets.Networks().Get(r.FromChainID)
	if !ok {
		return nil, false, apierr.New(apierr.ServiceUnavailable, "Chain %d is not configured in this deployment.", r.FromChainID)
	}
	wallet := common.HexToAddress(rr.FromAddress)
	asset := s.symbol(r.FromChainID, r.FromToken)
	var calls []wallets.SwapCall
	if r.Approval != nil {
		allowance, err := call(ctx, n.Client, r.Approval.Token, chain.ERC20Call("allowance", wallet, r.Approval.Spender))
		if err != nil {
			return nil, false, err
		}
		if allowance.Cmp(r.Approval.Amount) < 0 {
			calls = append(calls, wallets.SwapCall{Purpose: wallets.PurposeSwapApproval, To: r.Approval.Token, Value: new(big.Int),
				Data:  chain.ERC20Call("approve", r.Approval.Spender, r.Approval.Amount),
				Asset: asset, Amount: r.Approval.Amount, Recipient: r.Approval.Spender})
		}
	}
	gas := r.Transaction.Gas
	if gas == 0 {
		gas = swapGas
	}
	value := r.Transaction.Value
	if value == nil {
		value = new(big.Int)
	}
	calls = append(calls, wallets.SwapCall{Purpose: wallets.PurposeSwap, To: r.Transaction.To, Value: value, Data: r.Transaction.Data, Gas: gas,
		Asset: asset, Amount: r.FromAmount, Recipient: r.Transaction.To})
	sw := &Swap{ID: ids.New("swp", now), WalletID: *q.WalletID, RouteID: rr.ID, QuoteID: q.ID, FromChainID: r.FromChainID, ToChainID: r.ToChainID,
		FromToken: r.FromToken.Hex(), ToToken: r.ToToken.Hex(), FromAmount: r.FromAmount.String(), ToAmount: r.ToAmount.String(),
		ToAmountMin: r.ToAmountMin.String(), ChargedCredits: "0", CreatedAt: now, UpdatedAt: now}
	dispatch := func(context.Context) {}
	_, status, err := s.cfg.Wallets.SendForSwap(ctx, sc, *q.WalletID, wallets.SwapSend{
		SwapID: sw.ID, ChainID: r.FromChainID, Calls: calls,
		Intent:          policy.Intent{Operation: policy.OpSwapsExecute, ChainID: r.FromChainID, To: r.Transaction.To, Recipient: wallet, Asset: asset, Amount: r.FromAmount},
		ApprovalService: ServiceID, ApprovalInput: swapApprovalInput(q), ApprovalID: req.ApprovalID,
		CreditsMicro: s.cfg.PriceMicro, QuoteKey: qit.Key(), Requester: requester, CallID: callID,
		Records: func(txs []*wallets.WalletTransaction, status string) ([]store.Op, error) {
			sw.Status = status
			sw.Transactions = sw.Transactions[:0]
			for _, t := range txs {
				sw.Transactions = append(sw.Transactions, SwapTx{Purpose: t.Purpose, TransactionID: t.ID, Hash: t.Hash, Status: t.Status})
			}
			sw.ApprovalID = txs[0].ApprovalID
			evOps, d, err := s.event(sc, sw)
			dispatch = d
			return append([]store.Op{store.PutOp(encodeSwap(sc, sw, 1), store.NotExists())}, evOps...), err
		},
	})
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code == apierr.QuoteAlreadyUsed {
			if it, gerr := s.cfg.Store.Get(ctx, qit.Key()); gerr == nil && it.String("usedBy") == callID {
				again, gerr := s.replayed(ctx, sc, it.String("used"))
				return again, true, gerr
			}
		}
		return nil, false, err
	}
	sw.Status = status
	dispatch(context.WithoutCancel(ctx))
	return sw, false, nil
}

// replayed returns the swap an earlier attempt of this call executed, to
// a retry: that attempt's answer was never stored (or expired), its audit
// event, which carries the credit hold of the swap's transactions,
// written or not; the retry owes the hold to that event
// (wallets.InheritHolds).
func (s *Service) replayed(ctx context.Context, sc wallets.Scope, id string) (*Swap, error) {
	sw, err := s.Get(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	txs := make([]string, 0, len(sw.Transactions))
	for _, t := range sw.Transactions {
		txs = append(txs, t.TransactionID)
	}
	if err := s.cfg.Wallets.InheritHolds(ctx, sc, sw.WalletID, txs...); err != nil {
		return nil, err
	}
	return sw, nil
}

// event is sw's swap.<status> event as members of the transaction that
// writes sw, and its fan-out, to run once that transaction committed.
func (s *Service) event(sc wallets.Scope, sw *Swap) ([]store.Op, func(context.Context), error) {
	if s.cfg.Outbox == nil {
		return nil, func(context.Context) {}, nil
	}
	ops, dispatch, err := s.cfg.Outbox.Outboxed(sc.AccountID, sc.ProjectID, "swap."+sw.Status, sw)
	if err != nil {
		return nil, nil, fmt.Errorf("swaps: event swap.%s: %w", sw.Status, err)
	}
	return ops, dispatch, nil
}

func (s *Service) loadSwap(ctx context.Context, sc wallets.Scope, id string) (*Swap, int64, error) {
	if !ids.Valid("swp", id) {
		return nil, 0, apierr.New(apierr.NotFound, "No such swap.")
	}
	it, err := s.cfg.Store.Get(ctx, key(sc, "swp", id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, apierr.New(apierr.NotFound, "No such swap.")
	}
	if err != nil {
		return nil, 0, fmt.Errorf("swaps: read swap: %w", err)
	}
	var sw Swap
	if err := it.Doc(&sw); err != nil {
		return nil, 0, err
	}
	return &sw, it.Int("rev"), nil
}

// Get reads a swap, its transactions advanced first.
func (s *Service) Get(ctx context.Context, sc wallets.Scope, id string) (*Swap, error) {
	sw, _, err := s.loadSwap(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(sw.Transactions))
	for i, t := range sw.Transactions {
		ids[i] = t.TransactionID
	}
	if _, err := s.cfg.Wallets.SwapTransactions(ctx, sc, sw.WalletID, ids); err != nil {
		return nil, err
	}
	fresh, err := s.Refresh(ctx, sc, id)
	if err != nil {
		// The router or the chain did not answer: the swap as last known,
		// refreshed by the next read or move of its transactions.
		s.cfg.Logger.Warn("swaps: refresh on read", "swap", id, "error", err.Error())
		return sw, nil
	}
	return fresh, nil
}

// List lists the scope's swaps, newest first.
func (s *Service) List(ctx context.Context, sc wallets.Scope, limit int, cursor string) ([]*Swap, string, error) {
	return paging.List(ctx, s.cfg.Store, "acct#"+sc.AccountID, key(sc, "swp", "").SK, true, limit, cursor, func(it store.Item) (*Swap, string, error) {
		var sw Swap
		if err := it.Doc(&sw); err != nil {
			return nil, "", err
		}
		return &sw, sw.ID, nil
	})
}

// Refresh recomputes a swap's status from its transactions (as stored) and
// the router, and stores a change with its swap.<status> event. The wallets
// service calls it when one of the swap's transactions moves.
func (s *Service) Refresh(ctx context.Context, sc wallets.Scope, id string) (*Swap, error) {
	for attempt := 0; attempt < 8; attempt++ {
		sw, rev, err := s.loadSwap(ctx, sc, id)
		if err != nil {
			return nil, err
		}
		if sw.Status == SwapDone || sw.Status == SwapFailed {
			return sw, nil
		}
		next, err := s.derive(ctx, sc, sw)
		if err != nil {
			return sw, err
		}
		if next == nil {
			return sw, nil
		}
		next.UpdatedAt = s.now()
		ops := []store.Op{store.PutOp(encodeSwap(sc, next, rev+1), store.AttrEquals("rev", rev))}
		dispatch := func(context.Context) {}
		if next.Status != sw.Status {
			var evOps []store.Op
			if evOps, dispatch, err = s.event(sc, next); err != nil {
				return sw, err
			}
			ops = append(ops, evOps...)
		}
		err = s.cfg.Store.Transact(ctx, ops)
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return sw, fmt.Errorf("swaps: update swap: %w", err)
		}
		dispatch(context.WithoutCancel(ctx))
		return next, nil
	}
	return nil, errors.New("swaps: the swap kept changing")
}

// derive is the swap as its transactions say now; nil when unchanged.
func (s *Service) derive(ctx context.Context, sc wallets.Scope, sw *Swap) (*Swap, error) {
	next := *sw
	next.Transactions = make([]SwapTx, len(sw.Transactions))
	var last *wallets.WalletTransaction
	failed := ""
	pendingApproval := false
	for i, st := range sw.Transactions {
		t, err := s.cfg.Wallets.PeekTransaction(ctx, sc, sw.WalletID, st.TransactionID)
		if err != nil {
			return nil, err
		}
		next.Transactions[i] = SwapTx{Purpose: t.Purpose, TransactionID: t.ID, Hash: t.Hash, Status: t.Status}
		last = t
		switch t.Status {
		case wallets.StatusPendingApproval:
			pendingApproval = true
		case wallets.StatusRejected:
			failed = firstOf(failed, "approval_rejected")
		case wallets.StatusExpired:
			failed = firstOf(failed, "expired")
		case wallets.StatusFailed:
			failed = firstOf(failed, failureSubstatus(t))
		}
	}
	switch {
	case failed != "":
		next.Status, next.Substatus = SwapFailed, &failed
	case pendingApproval:
		next.Status = SwapPendingApproval
	case last.Status == wallets.StatusConfirmed:
		rr, err := s.loadRoute(ctx, sc, sw.RouteID)
		if err != nil {
			return nil, err
		}
		st, err := s.cfg.Router.Status(ctx, rr.Route, common.HexToHash(*last.Hash))
		if err != nil {
			return nil, routerErr(err)
		}
		switch st.Status {
		case StatusDone:
			next.Status = SwapDone
			if st.Receiving != nil && st.Receiving.Amount != nil {
				next.ToAmount = st.Receiving.Amount.String()
			}
			if next.ChargedCredits, err = s.cfg.Wallets.SwapCharged(ctx, sc, sw.WalletID, last.ID); err != nil {
				return nil, err
			}
		case StatusFailed:
			next.Status = SwapFailed
		default:
			next.Status = SwapPending
		}
		if st.Substatus != "" {
			sub := st.Substatus
			next.Substatus = &sub
		}
	default:
		next.Status = SwapPending
	}
	if next.Status == SwapDone && next.ChargedCredits == "0" {
		return nil, nil // the capture lands with the transaction's settlement: look again then
	}
	a, _ := json.Marshal(sw)
	b, _ := json.Marshal(&next)
	if string(a) == string(b) {
		return nil, nil
	}
	return &next, nil
}

func firstOf(have, v string) string {
	if have != "" {
		return have
	}
	return v
}

// failureSubstatus reads a failed transaction: a pool (or router) refusing
// an output below the minimum is slippage_exceeded.
func failureSubstatus(t *wallets.WalletTransaction) string {
	if t.Failure == nil {
		return "reverted"
	}
	r := strings.ToUpper(t.Failure.Reason)
	if strings.Contains(r, "INSUFFICIENT_OUTPUT_AMOUNT") || strings.Contains(r, "SLIPPAGE") || strings.Contains(r, "RETURN AMOUNT IS NOT ENOUGH") {
		return "slippage_exceeded"
	}
	if t.Failure.Code == "predecessor_failed" {
		return "approval_failed"
	}
	return t.Failure.Code
}

// LegView is one side of a route's transfer.
type LegView struct {
	ChainID uint64  `json:"chainId"`
	TxHash  string  `json:"txHash"`
	Token   string  `json:"token"`
	Amount  *string `json:"amount"`
}

// RouteStatus is a route's progress.
type RouteStatus struct {
	RouteID   string   `json:"routeId"`
	Status    string   `json:"status" enum:"not_found,pending,done,failed"`
	Substatus *string  `json:"substatus"`
	Sending   *LegView `json:"sending"`
	Receiving *LegView `json:"receiving"`
}

func legView(l *Leg) *LegView {
	if l == nil {
		return nil
	}
	v := &LegView{ChainID: l.ChainID, TxHash: l.TxHash.Hex(), Token: l.Token.Hex()}
	if l.Amount != nil {
		a := l.Amount.String()
		v.Amount = &a
	}
	return v
}

// FollowRoute reports a route's status by the sending transaction's hash
// (or the one accepted before). A transaction is accepted for the route
// only if it is exactly the route's transaction (sender, target, calldata,
// value, chain); anything else is 422 transaction_mismatch.
func (s *Service) FollowRoute(ctx context.Context, sc wallets.Scope, routeID, txHash string) (*RouteStatus, error) {
	if !ids.Valid("rte", routeID) {
		return nil, apierr.New(apierr.NotFound, "No such route.")
	}
	rr, err := s.loadRoute(ctx, sc, routeID)
	if err != nil {
		return nil, err
	}
	out := &RouteStatus{RouteID: routeID, Status: StatusNotFound}
	if txHash == "" {
		txHash = rr.TxHash
	}
	if txHash == "" {
		return out, nil
	}
	b, err := hexutil.Decode(txHash)
	if err != nil || len(b) != 32 {
		return nil, apierr.Invalid("Invalid transaction hash.", apierr.Field("query.txHash", "0x and 64 hex digits"))
	}
	hash := common.BytesToHash(b)
	if hash.Hex() != rr.TxHash {
		found, err := s.matches(ctx, rr, hash)
		if err != nil {
			return nil, err
		}
		if !found {
			return out, nil
		}
		rr.TxHash = hash.Hex()
		it := store.NewItem(key(sc, "rte", rr.ID))
		it.SetDoc(rr)
		if err := s.cfg.Store.Put(ctx, it); err != nil {
			return nil, fmt.Errorf("swaps: record route hash: %w", err)
		}
	}
	st, err := s.cfg.Router.Status(ctx, rr.Route, hash)
	if err != nil {
		return nil, routerErr(err)
	}
	out.Status, out.Sending, out.Receiving = st.Status, legView(st.Sending), legView(st.Receiving)
	if st.Substatus != "" {
		out.Substatus = &st.Substatus
	}
	return out, nil
}

// matches reads the transaction from the chain and compares it with the
// route's; false when the chain does not know it (yet).
func (s *Service) matches(ctx context.Context, rr *routeRec, hash common.Hash) (bool, error) {
	n, ok := s.cfg.Wallets.Networks().Get(rr.Route.FromChainID)
	if !ok {
		return false, apierr.New(apierr.ServiceUnavailable, "Chain %d is not configured in this deployment: its transactions cannot be checked.", rr.Route.FromChainID)
	}
	tx, _, err := n.Client.TransactionByHash(ctx, hash)
	if chain.NotYet(err) {
		return false, nil
	}
	if err != nil {
		return false, wallets.ChainUnavailable("transaction by hash", err)
	}
	want := rr.Route.Transaction
	value := want.Value
	if value == nil {
		value = new(big.Int)
	}
	sender, serr := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	mismatch := func(what string) error {
		return apierr.New(apierr.TransactionMismatch, "Transaction %s is not this route's: its %s differs from the prepared transaction.", hash.Hex(), what)
	}
	switch {
	case serr != nil || sender != common.HexToAddress(rr.FromAddress):
		return false, mismatch("sender")
	case tx.ChainId().Uint64() != want.ChainID:
		return false, mismatch("chain")
	case tx.To() == nil || *tx.To() != want.To:
		return false, mismatch("target")
	case string(tx.Data()) != string(want.Data):
		return false, mismatch("calldata")
	case tx.Value().Cmp(value) != 0:
		return false, mismatch("value")
	}
	return true, nil
}
