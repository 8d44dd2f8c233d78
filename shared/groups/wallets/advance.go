package wallets

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/chain"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/credits"
)

// advance moves t as far as it can go now, each step a write conditional on
// the transaction's revision (a concurrent advancer loses and re-reads), and
// returns it as it now stands. Errors of the chain leave t where it is for
// the next pass.
func (s *Service) advance(ctx context.Context, t *txRec, rev int64) (*txRec, error) {
	ctx = context.WithoutCancel(ctx)
	for step := 0; step < 8; step++ {
		var next *txRec
		var err error
		switch {
		case t.Status == StatusPendingApproval:
			next, err = s.decideApproval(ctx, t)
		case t.Status == StatusQueued && t.Raw == "":
			next, err = s.sign(ctx, t, rev)
			if err == nil && next != nil && next.Raw != "" {
				rev++ // sign committed the signed transaction itself
				t = next
				continue
			}
		case t.Status == StatusQueued:
			next, err = s.broadcast(ctx, t)
		case t.Status == StatusSubmitted:
			next, err = s.watch(ctx, t)
		case t.Settle != "":
			return s.settle(ctx, t, rev)
		}
		if err != nil || next == nil {
			return t, err
		}
		t, rev, err = s.transition(ctx, t, rev, next)
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

// transition writes next over t (conditional on rev), with the
// wallet.transaction.<status> event of a change of status; on a lost race
// it returns the transaction as the winner left it.
func (s *Service) transition(ctx context.Context, t *txRec, rev int64, next *txRec) (*txRec, int64, error) {
	next.UpdatedAt = s.now()
	ops := append([]store.Op{store.PutOp(encodeTx(next, rev+1), store.AttrEquals("rev", rev))}, next.commitWith...)
	next.commitWith = nil
	var evs events
	if next.Status != t.Status {
		if err := s.add(&evs, next.AccountID, next.ProjectID, "wallet.transaction."+next.Status, next.view()); err != nil {
			return t, rev, err
		}
		ops = append(ops, evs.ops...)
	}
	err := s.st.Transact(ctx, ops)
	if errors.Is(err, store.ErrConditionFailed) {
		it, gerr := s.st.Get(ctx, txKey(t.scope(), t.WalletID, t.ID))
		if gerr != nil {
			return t, rev, gerr
		}
		fresh, frev, derr := decodeTx(it)
		if derr != nil {
			return t, rev, derr
		}
		return fresh, frev, nil
	}
	if err != nil {
		return t, rev, fmt.Errorf("wallets: transition %s: %w", t.ID, err)
	}
	if next.Status != t.Status {
		evs.send(ctx)
		if next.Status == StatusQueued {
			s.enqueue(ctx, next, 0)
		}
		if next.SwapID != nil && s.onSwapTx != nil {
			s.onSwapTx(ctx, next.scope(), *next.SwapID)
		}
	}
	return next, rev + 1, nil
}

func (t *txRec) copy() *txRec {
	c := *t
	return &c
}

// fail ends t as failed, its reservation and hold to be released.
func (s *Service) fail(t *txRec, code, reason string) *txRec {
	n := t.copy()
	n.Status, n.Failure, n.Settle = StatusFailed, &TxFailure{Code: code, Reason: reason}, settleRelease
	return n
}

func (s *Service) decideApproval(ctx context.Context, t *txRec) (*txRec, error) {
	a, err := s.approvals.Get(ctx, t.AccountID, t.ProjectID, *t.ApprovalID)
	if err != nil {
		return nil, err
	}
	n := t.copy()
	switch a.Status {
	case approvals.StatusApproved:
		if _, err := s.approvals.Consume(ctx, t.AccountID, t.ProjectID, a.ID, a.ServiceID, a.OperationID, a.Input); err != nil {
			return nil, err
		}
		n.Status, n.Deadline = StatusQueued, s.now().Add(SubmitDeadline)
	case approvals.StatusConsumed:
		// Consumed by an earlier pass that died before this write: the
		// approval is bound to this transaction's quote alone.
		n.Status, n.Deadline = StatusQueued, s.now().Add(SubmitDeadline)
	case approvals.StatusRejected:
		n.Status, n.Settle = StatusRejected, settleRelease
	case approvals.StatusExpired:
		n.Status, n.Settle = StatusExpired, settleRelease
	default:
		return nil, nil
	}
	return n, nil
}

// sign fixes t's nonce, fees and signature. The wallet's next nonce and the
// signed transaction are written in one transaction: a nonce is never given
// twice, and a crash after this write rebroadcasts the same bytes.
func (s *Service) sign(ctx context.Context, t *txRec, rev int64) (*txRec, error) {
	if t.After != "" {
		prev, err := s.loadTx(ctx, t.scope(), t.WalletID, t.After)
		if err != nil {
			return nil, err
		}
		switch prev.Status {
		case StatusConfirmed:
		case StatusFailed, StatusRejected, StatusExpired:
			return s.fail(t, "predecessor_failed", "the transaction it depends on ("+prev.ID+") is "+prev.Status), nil
		default:
			return nil, nil
		}
	}
	if s.now().After(t.Deadline) {
		n := t.copy()
		n.Status, n.Settle = StatusExpired, settleRelease
		return n, nil
	}
	net, err := s.network(t.ChainID)
	if err != nil {
		return nil, err
	}
	w, err := s.load(ctx, t.scope(), t.WalletID)
	if err != nil {
		return nil, err
	}
	value, _ := new(big.Int).SetString(t.CallValue, 10)
	data, _ := hexutil.Decode(t.CallData)
	// Estimated again now: the chain may have moved since the quote, and a
	// swap's call could not be estimated before its approval was mined.
	c := &call{ChainID: t.ChainID, To: common.HexToAddress(t.CallTo), Value: value, Data: data}
	from := common.HexToAddress(w.rec.Address)
	sim, fee, err := s.simulate(ctx, net, from, c)
	if err != nil {
		return nil, err
	}
	if !sim.Success {
		return s.fail(t, "simulation_failed", deref(sim.RevertReason)), nil
	}
	key, err := s.openKeyOf(ctx, w)
	if err != nil {
		return nil, err
	}
	defer zero(key)
	nonceAttr := fmt.Sprintf("n%d", t.ChainID)
	nonce := uint64(w.item.Int(nonceAttr))
	tip, _ := new(big.Int).SetString(fee.MaxPriorityFeePerGas, 10)
	feeCap, _ := new(big.Int).SetString(fee.MaxFeePerGas, 10)
	signer := types.LatestSignerForChainID(new(big.Int).SetUint64(t.ChainID))
	signed, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(t.ChainID), Nonce: nonce,
		GasTipCap: tip, GasFeeCap: feeCap, Gas: c.Gas, To: &c.To, Value: c.Value, Data: c.Data}), signer, key)
	if err != nil {
		return nil, fmt.Errorf("wallets: sign: %w", err)
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, err
	}
	n := t.copy()
	hash := signed.Hash().Hex()
	n.Raw, n.Hash, n.Nonce, n.NetworkFee, n.Gas, n.UpdatedAt = hexutil.Encode(raw), &hash, &nonce, fee, c.Gas, s.now()
	nonceCond := store.AttrEquals(nonceAttr, int64(nonce))
	if nonce == 0 {
		nonceCond = store.AttrNotExists(nonceAttr)
	}
	err = s.st.Transact(ctx, []store.Op{
		store.UpdateOp(w.item.Key(), store.Update{Set: map[string]any{nonceAttr: int64(nonce + 1)}}, nonceCond),
		store.PutOp(encodeTx(n, rev+1), store.AttrEquals("rev", rev)),
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, nil // another send took the nonce, or another pass signed t: the next pass sees which
	}
	if err != nil {
		return nil, fmt.Errorf("wallets: record signed transaction: %w", err)
	}
	return n, nil
}

// broadcast sends t's signed bytes (again, after a crash: the node knows
// them, or mined them already).
func (s *Service) broadcast(ctx context.Context, t *txRec) (*txRec, error) {
	net, err := s.network(t.ChainID)
	if err != nil {
		return nil, err
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(hexutil.MustDecode(t.Raw)); err != nil {
		return nil, fmt.Errorf("wallets: stored transaction %s: %w", t.ID, err)
	}
	err = net.Client.SendTransaction(ctx, &tx)
	n := t.copy()
	n.Status = StatusSubmitted
	switch {
	case err == nil || isKnown(err):
		return n, nil
	case strings.Contains(err.Error(), "nonce too low"):
		// Mined already (a pass died after sending), or the nonce went to
		// another transaction: the receipt says which.
		if _, rerr := net.Client.TransactionReceipt(ctx, tx.Hash()); rerr == nil {
			return n, nil
		}
		return s.fail(t, "broadcast_rejected", err.Error()), nil
	case strings.Contains(strings.ToLower(err.Error()), "insufficient funds"):
		covered, berr := s.headCovers(ctx, net, t, &tx)
		switch {
		case berr != nil:
			return nil, berr
		case covered:
			// The node's pool checks funds against its own state, which
			// catches up with the head some time after each block: a
			// wallet funded in the last blocks is refused though the head
			// holds its funds. The next pass sends it again.
			return nil, nil
		}
		return s.rejected(ctx, t, err)
	case isDefinitive(err):
		return s.rejected(ctx, t, err)
	}
	return nil, ChainUnavailable("send transaction", err)
}

// headCovers reports whether t's sender holds, at the chain's head, what
// tx may cost at most (its gas at its fee cap, and its value).
func (s *Service) headCovers(ctx context.Context, net *chain.Network, t *txRec, tx *types.Transaction) (bool, error) {
	bal, err := net.Client.BalanceAt(ctx, common.HexToAddress(t.From), nil)
	if err != nil {
		return false, ChainUnavailable("balance", err)
	}
	return bal.Cmp(tx.Cost()) >= 0, nil
}

func isKnown(err error) bool {
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "already known") || strings.Contains(m, "known transaction")
}

// isDefinitive: the node refused the transaction itself (funds, fees,
// size), not the connection.
func isDefinitive(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"insufficient funds", "intrinsic gas too low", "exceeds block gas limit", "fee cap less than block base fee",
		"max fee per gas less than block base fee", "oversized data", "invalid sender", "replacement transaction underpriced", "tx fee"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// rejected handles a signed transaction the node refused for good. Its
// nonce must not stay a gap: if no later send took the next nonce, the
// wallet's counter goes back; otherwise a zero-value transfer to itself
// fills the nonce (sent by settle). The counter goes back in the
// transaction that records the failure, so that a concurrent advancer that
// saw the counter moved and recorded a filler instead cannot leave both:
// a filler and a send that reuse the nonce.
func (s *Service) rejected(ctx context.Context, t *txRec, cause error) (*txRec, error) {
	n := s.fail(t, "broadcast_rejected", cause.Error())
	n.Hash = nil
	nonceAttr := fmt.Sprintf("n%d", t.ChainID)
	w, err := s.load(ctx, t.scope(), t.WalletID)
	if err != nil {
		return nil, err
	}
	if w.item.Int(nonceAttr) == int64(*t.Nonce+1) {
		n.Nonce = nil
		n.commitWith = []store.Op{store.UpdateOp(w.item.Key(), store.Update{Set: map[string]any{nonceAttr: int64(*t.Nonce)}},
			store.AttrEquals(nonceAttr, int64(*t.Nonce+1)))}
		return n, nil
	}
	net, err := s.network(t.ChainID)
	if err != nil {
		return nil, err
	}
	key, err := s.openKeyOf(ctx, w)
	if err != nil {
		return nil, err
	}
	defer zero(key)
	tip, feeCap, err := fees(ctx, net.Client)
	if err != nil {
		return nil, err
	}
	self := common.HexToAddress(w.rec.Address)
	filler, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(t.ChainID), Nonce: *t.Nonce,
		GasTipCap: tip, GasFeeCap: feeCap, Gas: 21_000, To: &self, Value: new(big.Int)}), types.LatestSignerForChainID(new(big.Int).SetUint64(t.ChainID)), key)
	if err != nil {
		return nil, err
	}
	raw, _ := filler.MarshalBinary()
	n.Filler = hexutil.Encode(raw)
	return n, nil
}

// watch reads t's receipt: success confirms it, a revert fails it (with
// the reason the call gives at the block before).
func (s *Service) watch(ctx context.Context, t *txRec) (*txRec, error) {
	net, err := s.network(t.ChainID)
	if err != nil {
		return nil, err
	}
	r, err := net.Client.TransactionReceipt(ctx, common.HexToHash(*t.Hash))
	if chain.NotYet(err) {
		return nil, s.fillGap(ctx, net, t)
	}
	if err != nil {
		return nil, ChainUnavailable("receipt", err)
	}
	n := t.copy()
	gas := r.GasUsed
	price := r.EffectiveGasPrice
	if price == nil {
		price = new(big.Int)
	}
	paid := new(big.Int).Mul(new(big.Int).SetUint64(gas), price).String()
	priceS := price.String()
	block := r.BlockNumber.Uint64()
	n.NetworkFee.GasUsed, n.NetworkFee.EffectiveGasPrice, n.NetworkFee.Amount, n.BlockNumber = &gas, &priceS, &paid, &block
	if r.Status == types.ReceiptStatusSuccessful {
		n.Status, n.Settle = StatusConfirmed, settleCapture
		return n, nil
	}
	reason := "reverted"
	value, _ := new(big.Int).SetString(t.CallValue, 10)
	to := common.HexToAddress(t.CallTo)
	_, cerr := net.Client.CallContract(ctx, ethereum.CallMsg{From: common.HexToAddress(t.From), To: &to, Value: value,
		Data: hexutil.MustDecode(t.CallData), Gas: t.Gas}, new(big.Int).Sub(r.BlockNumber, big.NewInt(1)))
	if why, ok := revertReason(cerr); ok {
		reason = why
	}
	f := s.fail(t, "reverted", reason)
	f.NetworkFee, f.BlockNumber = n.NetworkFee, n.BlockNumber
	return f, nil
}

// fillGap sends t's signed bytes again, and those of the wallet's sends
// before it, when the node has neither mined nor pooled them: a chain that
// lost its last blocks (or a node restarted with an empty pool) leaves the
// wallet's recorded nonces ahead of the chain, and every later send would
// wait behind the gap for good. The node's pending nonce is the first
// nonce it has no executable transaction for; nothing is sent while it is
// past t's.
func (s *Service) fillGap(ctx context.Context, net *chain.Network, t *txRec) error {
	if t.Nonce == nil {
		return nil
	}
	next, err := net.Client.PendingNonceAt(ctx, common.HexToAddress(t.From))
	if err != nil {
		return ChainUnavailable("pending nonce", err)
	}
	if next > *t.Nonce {
		return nil
	}
	lost, err := s.signedNonces(ctx, t, next)
	if err != nil {
		return err
	}
	for _, raw := range lost {
		var tx types.Transaction
		if err := tx.UnmarshalBinary(hexutil.MustDecode(raw)); err != nil {
			return fmt.Errorf("wallets: stored transaction of %s: %w", t.WalletID, err)
		}
		if err := net.Client.SendTransaction(ctx, &tx); err != nil && !isKnown(err) && !strings.Contains(err.Error(), "nonce too low") {
			return ChainUnavailable("send transaction again", err)
		}
	}
	return nil
}

// signedNonces is the stored signed bytes of t's wallet's transactions on
// t's chain with nonces from first to t's, in nonce order: each send's own
// transaction, or the filler of a rejected one not yet settled.
func (s *Service) signedNonces(ctx context.Context, t *txRec, first uint64) ([]string, error) {
	want := *t.Nonce - first + 1
	found := make(map[uint64]string, want)
	prefix := txKey(t.scope(), t.WalletID, "").SK
	after := ""
	for uint64(len(found)) < want {
		pg, err := s.st.Query(ctx, store.Query{PK: txKey(t.scope(), t.WalletID, "").PK, Prefix: prefix, After: after, Limit: recheckPage, Reverse: true})
		if err != nil {
			return nil, fmt.Errorf("wallets: transactions of %s: %w", t.WalletID, err)
		}
		for _, it := range pg.Items {
			after = it.Key().SK
			r, _, err := decodeTx(it)
			if err != nil {
				return nil, err
			}
			if r.ChainID != t.ChainID || r.Nonce == nil || *r.Nonce < first || *r.Nonce > *t.Nonce {
				continue
			}
			switch {
			case r.Hash != nil && r.Raw != "":
				found[*r.Nonce] = r.Raw
			case r.Filler != "":
				found[*r.Nonce] = r.Filler
			}
		}
		if !pg.More {
			break
		}
	}
	out := make([]string, 0, len(found))
	for n := first; n <= *t.Nonce; n++ {
		if raw, ok := found[n]; ok {
			out = append(out, raw)
		}
	}
	return out, nil
}

// settle does what a final transition left: send a nonce filler, give back
// the spend reservation of a send that moved nothing, capture or release
// the credit hold; then clears the debt and leaves the open index. Each
// step is idempotent, so a crash between them repeats none.
func (s *Service) settle(ctx context.Context, t *txRec, rev int64) (*txRec, error) {
	if t.Filler != "" {
		net, err := s.network(t.ChainID)
		if err != nil {
			return t, err
		}
		var tx types.Transaction
		if err := tx.UnmarshalBinary(hexutil.MustDecode(t.Filler)); err != nil {
			return t, err
		}
		if err := net.Client.SendTransaction(ctx, &tx); err != nil && !isKnown(err) && !strings.Contains(err.Error(), "nonce too low") {
			return t, ChainUnavailable("send nonce filler", err)
		}
	}
	if t.Settle == settleRelease && t.Reserved {
		if err := s.unreserve(ctx, t); err != nil {
			return t, err
		}
	}
	n := t.copy()
	if t.HoldID != "" {
		h := s.ledger.HoldOf(t.AccountID, t.HoldID, t.Credits, t.holdDeadline())
		var err error
		if t.Settle == settleCapture {
			err = h.Capture(credits.SettledBy(ctx, "wallets.transactions.confirm"), t.Credits)
			n.Charged = t.Credits
		} else {
			err = h.Release(credits.SettledBy(ctx, "wallets.transactions.release"))
		}
		if errors.Is(err, credits.ErrHoldEnded) {
			// Ended before: by an earlier pass, or released by the sweeper
			// when the transaction took longer than its hold's deadline.
			n.Charged, err = s.ledger.Charged(ctx, t.AccountID, t.HoldID)
		}
		if err != nil {
			return t, fmt.Errorf("wallets: settle hold of %s: %w", t.ID, err)
		}
	}
	n.Settle, n.Filler = "", ""
	n.UpdatedAt = s.now()
	err := s.st.Transact(ctx, []store.Op{
		store.PutOp(encodeTx(n, rev+1), store.AttrEquals("rev", rev)),
		store.DeleteOp(openKey(t.ID)),
	})
	if errors.Is(err, store.ErrConditionFailed) {
		// A concurrent advancer settled it first: answer as it left it,
		// not with the charge still missing from a confirmed transaction.
		fresh, ferr := s.loadTx(ctx, t.scope(), t.WalletID, t.ID)
		if ferr != nil {
			return t, ferr
		}
		return fresh, nil
	}
	if err != nil {
		return t, fmt.Errorf("wallets: settled %s: %w", t.ID, err)
	}
	if n.SwapID != nil && s.onSwapTx != nil {
		s.onSwapTx(ctx, n.scope(), *n.SwapID) // its charge is final now
	}
	return n, nil
}

// unreserve removes t's spend from its wallet's rolling totals.
func (s *Service) unreserve(ctx context.Context, t *txRec) error {
	for attempt := 0; attempt < 64; attempt++ {
		w, err := s.load(ctx, t.scope(), t.WalletID)
		if err != nil {
			return err
		}
		kept := make([]spend, 0, len(w.spends))
		for _, sp := range w.spends {
			if sp.TxID != t.ID {
				kept = append(kept, sp)
			}
		}
		if len(kept) == len(w.spends) {
			return nil
		}
		_, err = s.st.Update(ctx, w.item.Key(), store.Update{Set: map[string]any{"spends": store.DocOf(kept), "rev": w.rev + 1}}, store.AttrEquals("rev", w.rev))
		if !errors.Is(err, store.ErrConditionFailed) {
			return err
		}
	}
	return errors.New("wallets: the wallet kept changing while releasing a reservation")
}

func (s *Service) loadTx(ctx context.Context, sc Scope, walletID, id string) (*txRec, error) {
	it, err := s.st.Get(ctx, txKey(sc, walletID, id))
	if err != nil {
		return nil, err
	}
	t, _, err := decodeTx(it)
	return t, err
}
