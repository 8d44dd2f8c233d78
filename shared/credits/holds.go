package credits

import (
	"context"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/accounts"
	"platformapi/shared/ids"
	"platformapi/shared/store"
)

// Hold is credits reserved before a metered operation runs. It ends exactly
// once: captured at the exact charge (the rest returned) or released.
type Hold struct {
	l         *Ledger
	accountID string
	ID        string
	Amount    int64
}

func holdKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "hold#" + id}
}

// ErrHoldEnded means the hold was already captured or released: ending it
// again changes nothing, so a settlement retried after a crash is safe.
var ErrHoldEnded = errors.New("credits: hold already ended")

// HoldOps are the transaction members that take amountMicro from the
// balance as a new hold with the given id, for a caller that commits the
// hold with its own effect (a trading order and its hold exist together or
// not at all). ops[0] is the balance check: a TxError at its index means
// the balance cannot cover the hold.
func HoldOps(accountID, holdID string, amountMicro int64, reference string, now time.Time) []store.Op {
	rec := store.NewItem(holdKey(accountID, holdID))
	rec["amount"] = amountMicro
	rec["state"] = "held"
	rec["reference"] = reference
	return []store.Op{
		store.UpdateOp(accounts.Key(accountID), store.Update{Add: map[string]int64{accounts.AttrBalance: -amountMicro}},
			store.Exists(), store.NumAtLeast(accounts.AttrBalance, amountMicro)),
		store.PutOp(rec, store.NotExists()),
		entryOp(accountID, Entry{ID: ids.New("led", now), Kind: KindHold, AmountMicro: -amountMicro, Reference: holdID, CreatedAt: now.UTC()}),
	}
}

// HoldOf is a hold taken earlier (with HoldOps or Hold), to capture or
// release it from another process.
func (l *Ledger) HoldOf(accountID, holdID string, amountMicro int64) *Hold {
	return &Hold{l: l, accountID: accountID, ID: holdID, Amount: amountMicro}
}

// Hold takes amountMicro from the balance, or fails with ErrInsufficient and
// changes nothing. The balance check and the debit are one conditional
// write, so concurrent holds can never take the balance below zero.
func (l *Ledger) Hold(ctx context.Context, accountID string, amountMicro int64, reference string) (*Hold, error) {
	if amountMicro < 0 {
		return nil, fmt.Errorf("credits: negative hold %d", amountMicro)
	}
	now := l.now()
	h := &Hold{l: l, accountID: accountID, ID: ids.New("hld", now), Amount: amountMicro}
	err := l.st.Transact(ctx, HoldOps(accountID, h.ID, amountMicro, reference, now))
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index == 0 {
		return nil, ErrInsufficient
	}
	if err != nil {
		return nil, fmt.Errorf("credits: hold: %w", err)
	}
	return h, nil
}

// Capture charges exactMicro (at most the held amount) and returns the rest
// to the balance.
func (h *Hold) Capture(ctx context.Context, exactMicro int64) error {
	if exactMicro < 0 || exactMicro > h.Amount {
		return fmt.Errorf("credits: capture %d outside hold of %d", exactMicro, h.Amount)
	}
	return h.end(ctx, "captured", exactMicro)
}

// Release returns the whole hold to the balance.
func (h *Hold) Release(ctx context.Context) error { return h.end(ctx, "released", 0) }

func (h *Hold) end(ctx context.Context, state string, chargedMicro int64) error {
	now := h.l.now()
	refund := h.Amount - chargedMicro
	ops := []store.Op{
		store.UpdateOp(holdKey(h.accountID, h.ID), store.Update{Set: map[string]any{"state": state, "charged": chargedMicro}}, store.AttrEquals("state", "held")),
		entryOp(h.accountID, Entry{ID: ids.New("led", now), Kind: KindCapture, AmountMicro: 0, ChargedMicro: chargedMicro, Reference: h.ID, CreatedAt: now.UTC()}),
	}
	if state == "released" {
		ops = ops[:1]
	}
	if refund > 0 {
		ops = append(ops,
			store.UpdateOp(accounts.Key(h.accountID), store.Update{Add: map[string]int64{accounts.AttrBalance: refund}}, store.Exists()),
			entryOp(h.accountID, Entry{ID: ids.New("led", now.Add(1)), Kind: KindRelease, AmountMicro: refund, Reference: h.ID, CreatedAt: now.UTC()}))
	}
	err := h.l.st.Transact(ctx, ops)
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index == 0 {
		return ErrHoldEnded
	}
	if err != nil {
		return fmt.Errorf("credits: %s hold %s: %w", state, h.ID, err)
	}
	return nil
}

// Entries lists the account's ledger, oldest first (for audits and tests).
func (l *Ledger) Entries(ctx context.Context, accountID string, limit int) ([]Entry, error) {
	page, err := l.st.Query(ctx, store.Query{PK: "acct#" + accountID, Prefix: "ledger#", Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("credits: entries: %w", err)
	}
	out := make([]Entry, 0, len(page.Items))
	for _, it := range page.Items {
		e, err := decodeEntry(it)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
