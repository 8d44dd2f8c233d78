// Package credits is the account balance and its ledger. Amounts are integer
// micro-credits. The balance changes only in the same transaction as the
// ledger entries that explain it, and each such transaction is conditional
// on the account's ledger sequence it read, so concurrent changes commit one
// after another: the balance never goes negative, every entry knows the
// balance it left, and listing the entries in sequence order replays the
// balance exactly.
//
// Storage (single table, the account's partition):
//
//	acct#<acct> | account                       balance, ledgerSeq, ledgerAt (ms)
//	acct#<acct> | lgr#<ms, 13 digits>#<seq, 12>  one entry; sorts by time and by
//	                                            sequence alike (ledgerAt never
//	                                            goes back)
//	acct#<acct> | hold#<holdId>                 a hold, with who took it
//
// That is an account of one slice. A busy account's balance is split into
// slices that change independently (slices.go, docs/storage-design.md
// "Charged calls"); then the ledger's order is fixed by cuts (cuts.go).
package credits

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/domain/audit"
)

// ErrInsufficient means the balance cannot cover the amount.
var ErrInsufficient = errors.New("credits: insufficient balance")

// Entry types, as GET /credits/ledger names them.
const (
	TypeGrant   = "grant"   // credit-token redemption
	TypeTopUp   = "top_up"  // x402 purchase
	TypeCharge  = "charge"  // taken for good without a hold
	TypeHold    = "hold"    // reserved before a metered operation
	TypeCapture = "capture" // a hold became a charge; moves nothing itself
	TypeRelease = "release" // the unused part of a hold returned
)

// Attributes of the account item the ledger keeps beside the balance.
const (
	attrSeq = "ledgerSeq" // entries written so far
	attrAt  = "ledgerAt"  // unix ms of the newest entry (or move, on a slice)
)

// Entry is one ledger line: one change of the balance and what caused it.
type Entry struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Amount int64  `json:"amount"` // signed change of the balance
	// Charged is what a capture made final: money that left the balance
	// already with its hold.
	Charged int64 `json:"charged,omitempty"`
	// BalanceAfter is the account's balance once the entry committed. On
	// an account of several slices the stored value is its slice's, and
	// List computes the account's from the cuts.
	BalanceAfter int64 `json:"balanceAfter"`
	Seq          int64 `json:"seq"`
	// Slice is the slice whose sequence Seq counts (0 on an account of one).
	Slice      int       `json:"slice,omitempty"`
	OccurredAt time.Time `json:"occurredAt"`
	Reference  string    `json:"reference,omitempty"`
	Attribution
}

// Funding reports whether the entry is money coming in (a grant or a top-up)
// rather than spent.
func (e Entry) Funding() bool { return e.Type == TypeGrant || e.Type == TypeTopUp }

func entryKey(accountID string, e Entry) store.Key {
	return store.Key{PK: slicePK(accountID, e.Slice), SK: entrySK(e.OccurredAt.UnixMilli(), e.Seq)}
}

func entrySK(ms, seq int64) string { return fmt.Sprintf("lgr#%013d#%012d", ms, seq) }

func entryOp(accountID string, e Entry) store.Op {
	it := store.NewItem(entryKey(accountID, e))
	it.SetDoc(e)
	return store.PutOp(it, store.NotExists())
}

func decodeEntry(it store.Item) (Entry, error) {
	var e Entry
	if err := it.Doc(&e); err != nil {
		return Entry{}, fmt.Errorf("credits: decode entry: %w", err)
	}
	return e, nil
}

// Account is the part of an account item (or of one slice of its balance)
// the ledger reads before it changes the balance.
type Account struct {
	ID      string
	Balance int64
	Seq     int64
	At      int64 // unix ms of the newest entry
	// Slice is the slice read (0: the account item); Slices how many the
	// account had when it was read.
	Slice, Slices int
	// exists, hasSeq and hasAt pin the exact version read, which a change
	// of a sliced account is conditional on.
	exists, hasSeq, hasAt bool
}

// AccountOf reads the account item (as authentication already has it).
func AccountOf(accountID string, it store.Item) Account {
	return sliceOf(accountID, 0, SlicesOf(it), it)
}

func sliceOf(accountID string, slice, slices int, it store.Item) Account {
	return Account{ID: accountID, Balance: it.Int(accounts.AttrBalance), Seq: it.Int(attrSeq), At: it.Int(attrAt),
		Slice: slice, Slices: slices, exists: len(it) > 0, hasSeq: it.Has(attrSeq), hasAt: it.Has(attrAt)}
}

// Move is one entry of a change.
type Move struct {
	Type      string
	Amount    int64
	Charged   int64
	Reference string
	// Unaudited is a debit this move settles that no audit event carried
	// (a request's own hold, whose debit its end carries): the event of
	// the change carries it.
	Unaudited int64
}

// Change is a set of ledger entries and the balance update they explain,
// for a transaction the caller commits (together with its own effect).
// Committed must be called once it commits: it tells the request what it
// was charged.
type Change struct {
	// Ops are the transaction members; Ops[0] is the account's update,
	// whose failed condition means that another change committed since
	// the account was read: read it again and rebuild.
	Ops     []store.Op
	Entries []Entry
	note    func(int64)
	charged int64
}

// Change builds the entries of moves made by the caller in ctx (its
// request or the key a worker acts for) on the account as read. A change
// that would take the balance below zero is ErrInsufficient.
func (a Account) Change(ctx context.Context, now time.Time, moves ...Move) (*Change, error) {
	cause := CauseOf(ctx)
	attr := cause.Attribution()
	return a.change(now, attr, noteOf(cause), attr.Operation, moves)
}

// change builds the change; outside a request (note nil) a change made for
// a key also writes its own audit event, named event.
func (a Account) change(now time.Time, attr Attribution, note func(int64), event string, moves []Move) (*Change, error) {
	at := max(now.UnixMilli(), a.At)
	occurred := time.UnixMilli(at).UTC()
	ch := &Change{note: note}
	delta := int64(0)
	for i, m := range moves {
		delta += m.Amount
		e := Entry{ID: ids.New("led", occurred), Type: m.Type, Amount: m.Amount, Charged: m.Charged,
			BalanceAfter: a.Balance + delta, Seq: a.Seq + int64(i) + 1, Slice: a.Slice, OccurredAt: occurred, Reference: m.Reference, Attribution: attr}
		if !e.Funding() {
			ch.charged -= m.Amount
		}
		ch.charged += m.Unaudited
		ch.Entries = append(ch.Entries, e)
	}
	if a.Balance+delta < 0 {
		return nil, &shortError{by: -(a.Balance + delta)}
	}
	ch.Ops = append(ch.Ops, store.UpdateOp(a.key(), store.Update{
		Add: map[string]int64{accounts.AttrBalance: delta},
		Set: map[string]any{attrSeq: a.Seq + int64(len(moves)), attrAt: at},
	}, a.changeConds()...))
	for _, e := range ch.Entries {
		ch.Ops = append(ch.Ops, entryOp(a.ID, e))
	}
	if note == nil && len(attr.KeyPath) > 0 && event != "" {
		ch.Ops = append(ch.Ops, ch.settlementEvent(a.ID, event)...)
	}
	return ch, nil
}

// Committed tells the request in whose context the change was made what it
// charged (its audit event carries it); call it once the transaction
// holding Ops committed.
func (c *Change) Committed() {
	if c.note != nil && c.charged != 0 {
		c.note(c.charged)
	}
}

// OpenAccountOps are the transaction members that create an account funded
// with grantMicro; the caller adds them to the transaction that creates the
// account's first key, so neither exists without the other.
func OpenAccountOps(accountID string, grantMicro int64, reference string, now time.Time) []store.Op {
	at := now.UTC().Truncate(time.Millisecond)
	e := Entry{ID: ids.New("led", at), Type: TypeGrant, Amount: grantMicro, BalanceAfter: grantMicro, Seq: 1, OccurredAt: at, Reference: reference}
	acct := store.NewItem(accounts.Key(accountID))
	acct[accounts.AttrBalance] = grantMicro
	acct[attrSeq] = int64(1)
	acct[attrAt] = at.UnixMilli()
	acct["createdAt"] = now.Unix()
	return []store.Op{store.PutOp(acct, store.NotExists()), entryOp(accountID, e)}
}

// Ledger reads and moves balances.
type Ledger struct {
	st    store.Store
	now   func() time.Time
	known sliceCounts
}

// NewLedger builds a ledger on the item store.
func NewLedger(st store.Store, now func() time.Time) *Ledger {
	return &Ledger{st: st, now: now, known: sliceCounts{n: map[string]int{}, turn: rand.Uint64()}}
}

// Account reads the account's balance and ledger position: the account
// item, or on an account of several slices the next slice this process
// takes in turn. A caller about to take an amount reads AccountFor.
func (l *Ledger) Account(ctx context.Context, accountID string) (Account, error) {
	return l.account(ctx, accountID, -1)
}

// Balance returns the account's balance in micro-credits: on an account of
// several slices, the sum of one consistent snapshot of them.
func (l *Ledger) Balance(ctx context.Context, accountID string) (int64, error) {
	it, err := l.st.Get(ctx, accounts.Key(accountID))
	if err != nil {
		return 0, fmt.Errorf("credits: read account: %w", err)
	}
	a := AccountOf(accountID, it)
	l.known.set(accountID, a.Slices)
	if a.Slices <= 1 {
		return a.Balance, nil
	}
	return l.Total(ctx, accountID)
}

// Total is a sliced account's balance: the sum of one consistent snapshot
// of its slices (slices.go), for a caller that has read the account item
// and found it sliced.
func (l *Ledger) Total(ctx context.Context, accountID string) (int64, error) {
	snap, err := l.snapshot(ctx, accountID)
	return snap.total, err
}

// maxRaces bounds how often one change is rebuilt because others committed
// first; each rebuild waits a little longer, with jitter, so that a burst
// of changes on one account spreads out instead of colliding again.
const maxRaces = 64

// Raced waits before attempt n+1 of a write that lost a race, or reports
// that it has tried long enough. A change of the balance that lost its
// condition calls the ledger's Raced instead, which also applies the load
// rule.
func Raced(ctx context.Context, n int) error {
	if n >= maxRaces {
		return fmt.Errorf("credits: %d concurrent changes of one account in a row: %w", n, store.ErrUnavailable)
	}
	wait := time.Duration(min(1<<min(n, 6), 50)) * time.Millisecond
	t := time.NewTimer(wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Apply commits the transaction build makes from a fresh read of the
// account, built again while other changes of the account commit first.
// build returns the whole transaction and the change inside it; a failed
// condition of any other member is returned as build's caller left it.
//
// On an account of several slices a change that its slice cannot cover
// first borrows from the others (refill), and fails with ErrInsufficient
// only when a consistent snapshot of all of them cannot cover it.
func (l *Ledger) Apply(ctx context.Context, accountID string, build func(Account) ([]store.Op, *Change, error)) error {
	slice := -1
	for n := 0; ; n++ {
		a, err := l.account(ctx, accountID, slice)
		if err != nil {
			return err
		}
		ops, ch, err := build(a)
		var short *shortError
		if errors.As(err, &short) && a.Slices > 1 {
			moved, err := l.refill(ctx, a, a.Balance+short.by)
			if err != nil {
				return err
			}
			slice = a.Slice
			if err := l.again(ctx, n, moved); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		err = l.st.Transact(ctx, ops)
		if err == nil {
			ch.Committed()
			return nil
		}
		if !IsRace(err, ops, ch) {
			return err
		}
		slice = -1 // another slice may be less busy
		if err := l.Raced(ctx, accountID, n); err != nil {
			return err
		}
	}
}

// IsRace reports whether err is the failed account condition of ch in ops:
// another change committed since the account was read.
func IsRace(err error, ops []store.Op, ch *Change) bool {
	var tx *store.TxError
	if ch == nil || !errors.As(err, &tx) || tx.Index < 0 || tx.Index >= len(ops) {
		return false
	}
	return ops[tx.Index].Kind == store.OpUpdate && ops[tx.Index].Key == ch.Ops[0].Key && ops[tx.Index].Update.Set[attrSeq] != nil
}

// settlementEvent is the audit event of a change made outside any request:
// a charge settled later, or a run's step, is shown to the key that made it
// and counted in its usage like a request's.
func (c *Change) settlementEvent(accountID, operation string) []store.Op {
	e0 := c.Entries[0]
	e := audit.Event{RequestID: e0.RequestID, AccountID: accountID, KeyPath: e0.KeyPath, Operation: operation,
		Status: 200, ChargedMicro: c.charged, OccurredAt: e0.OccurredAt}
	if e0.ProjectID != "" {
		p := e0.ProjectID
		e.ProjectID = &p
	}
	return audit.SettlementOps(&e)
}
