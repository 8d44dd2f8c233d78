// Package credits is the account balance and its ledger. Amounts are integer
// micro-credits. The balance changes only in the same transaction as the
// ledger entry that explains it, and a conditional write keeps it from ever
// going negative, also under concurrent charges.
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

// ErrInsufficient means the balance cannot cover the amount.
var ErrInsufficient = errors.New("credits: insufficient balance")

// Entry kinds.
const (
	KindGrant   = "grant"   // credit-token redemption
	KindTopUp   = "top_up"  // x402 purchase
	KindHold    = "hold"    // reserved before a metered operation
	KindCapture = "capture" // the exact charge of a held operation
	KindRelease = "release" // the unused part of a hold returned
	KindRefund  = "refund"
)

// Entry is one ledger line.
type Entry struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	AmountMicro int64  `json:"amount"` // signed change of the available balance
	// ChargedMicro is what a capture charged: money that left the account
	// for good (it was already out of the balance since the hold).
	ChargedMicro int64     `json:"charged,omitempty"`
	Reference    string    `json:"reference,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

func decodeEntry(it store.Item) (Entry, error) {
	var e Entry
	if err := it.Doc(&e); err != nil {
		return Entry{}, fmt.Errorf("credits: decode entry: %w", err)
	}
	return e, nil
}

func entryOp(accountID string, e Entry) store.Op {
	it := store.NewItem(store.Key{PK: "acct#" + accountID, SK: "ledger#" + e.ID})
	it.SetDoc(e)
	return store.PutOp(it, store.NotExists())
}

// OpenAccountOps are the transaction members that create an account funded
// with grantMicro; the caller adds them to the transaction that creates the
// account's first key, so neither exists without the other.
func OpenAccountOps(accountID string, grantMicro int64, reference string, now time.Time) []store.Op {
	acct := store.NewItem(accounts.Key(accountID))
	acct[accounts.AttrBalance] = grantMicro
	acct["createdAt"] = now.Unix()
	return []store.Op{
		store.PutOp(acct, store.NotExists()),
		entryOp(accountID, Entry{ID: ids.New("led", now), Kind: KindGrant, AmountMicro: grantMicro, Reference: reference, CreatedAt: now.UTC()}),
	}
}

// CreditOps are the transaction members that add micro credits to an
// account bought by a purchase (reference: its receipt); the caller adds
// them to the transaction that marks the purchase credited.
func CreditOps(accountID string, micro int64, reference string, now time.Time) []store.Op {
	return []store.Op{
		store.UpdateOp(accounts.Key(accountID), store.Update{Add: map[string]int64{accounts.AttrBalance: micro}}, store.Exists()),
		entryOp(accountID, Entry{ID: ids.New("led", now), Kind: KindTopUp, AmountMicro: micro, Reference: reference, CreatedAt: now.UTC()}),
	}
}

// Ledger reads and moves balances.
type Ledger struct {
	st  store.Store
	now func() time.Time
}

// NewLedger builds a ledger on the item store.
func NewLedger(st store.Store, now func() time.Time) *Ledger { return &Ledger{st: st, now: now} }

// Balance returns the account's balance in micro-credits.
func (l *Ledger) Balance(ctx context.Context, accountID string) (int64, error) {
	it, err := l.st.Get(ctx, accounts.Key(accountID))
	if err != nil {
		return 0, fmt.Errorf("credits: read balance: %w", err)
	}
	return it.Int(accounts.AttrBalance), nil
}
