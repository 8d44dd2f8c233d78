package credits

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/accounts"
)

// Slices (docs/storage-design.md, "Charged calls"). DynamoDB serves at most
// 1,000 write units a second on one item, and a balance kept in one item
// changes by one transaction on it at a time. A busy account's balance is
// therefore split into N slices, each in a partition of its own and never
// negative; a change takes one slice and is conditional on that slice's
// exact version only:
//
//	acct#<acct>      | account   slice 0 (the account item), with ledgerSlices = N
//	acct#<acct>#s<i> | slice     slice i ≥ 1: balance, ledgerSeq, ledgerAt
//	acct#<acct>#s<i> | lgr#…     slice i's entries, keyed as slice 0's
//	acct#<acct>#mv   | moves     n: how many moves between slices committed
//	hold#<acct>#<id> | hold      a hold taken while N > 1
//	ledger#sliced    | <acct>    the accounts the scheduled pass cuts
//
// A slice too low for a debit borrows from the others in one transaction
// conditional on every slice it touches (a move). A move is no ledger entry
// (the total is unchanged), but it sets each slice it touches to a
// ledgerAt past all of theirs (a Lamport clock on milliseconds), so that
// entries ordered by (ledgerAt, slice, seq) respect every move. N only
// grows: a process that still takes fewer slices than there are is
// correct, only less spread. An account without ledgerSlices has one slice
// and is stored, read and written exactly as before slices existed.
const (
	attrSlices = "ledgerSlices"
	attrMoves  = "n"
	// MaxSlices bounds N: a consistent snapshot reads every slice in one
	// batch of at most 100 keys, and a move fits one transaction.
	MaxSlices = 96
)

func slicePK(accountID string, slice int) string {
	if slice == 0 {
		return "acct#" + accountID
	}
	return fmt.Sprintf("acct#%s#s%d", accountID, slice)
}

func sliceKey(accountID string, slice int) store.Key {
	if slice == 0 {
		return accounts.Key(accountID)
	}
	return store.Key{PK: slicePK(accountID, slice), SK: "slice"}
}

func movesKey(accountID string) store.Key {
	return store.Key{PK: "acct#" + accountID + "#mv", SK: "moves"}
}

func slicedKey(accountID string) store.Key { return store.Key{PK: "ledger#sliced", SK: accountID} }

// SlicesOf is how many slices the account item says its balance has.
func SlicesOf(accountItem store.Item) int { return int(max(accountItem.Int(attrSlices), 1)) }

func (a Account) key() store.Key { return sliceKey(a.ID, a.Slice) }

// changeConds are a change's conditions on what it read. An account of one
// slice changes in sequence order, as it always did, unless it has been
// sliced since it was read; a slice also moves without an entry, so a
// change of one is conditional on its exact version.
func (a Account) changeConds() []store.Cond {
	if a.Slices <= 1 {
		seq := store.AttrEquals(attrSeq, a.Seq)
		if a.Seq == 0 {
			seq = store.AttrNotExists(attrSeq)
		}
		return []store.Cond{store.Exists(), seq, store.AttrNotExists(attrSlices)}
	}
	return a.versionConds()
}

// versionConds hold while the slice is exactly as read: every change of
// one advances its sequence, every move its ledgerAt.
func (a Account) versionConds() []store.Cond {
	if !a.exists {
		return []store.Cond{store.NotExists()}
	}
	c := []store.Cond{store.Exists(), store.AttrNotExists(attrSeq), store.AttrNotExists(attrAt)}
	if a.hasSeq {
		c[1] = store.AttrEquals(attrSeq, a.Seq)
	}
	if a.hasAt {
		c[2] = store.AttrEquals(attrAt, a.At)
	}
	return c
}

// shortError is a change its slice cannot cover, by how much. It is
// ErrInsufficient to the caller; Apply first tries the other slices.
type shortError struct{ by int64 }

func (e *shortError) Error() string        { return ErrInsufficient.Error() }
func (e *shortError) Is(target error) bool { return target == ErrInsufficient }

// sliceCounts remembers, per process, the accounts of more than one slice
// and takes their slices in turn. Forgetting one is harmless: the next
// change reads the account item, which says N again.
type sliceCounts struct {
	mu   sync.Mutex
	n    map[string]int
	turn uint64
}

// rememberedAccounts bounds the memory of sliced accounts.
const rememberedAccounts = 4096

func (c *sliceCounts) get(accountID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.n[accountID], 1)
}

func (c *sliceCounts) set(accountID string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case n <= 1:
		delete(c.n, accountID)
	default:
		if len(c.n) >= rememberedAccounts {
			clear(c.n)
		}
		c.n[accountID] = n
	}
}

func (c *sliceCounts) next(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turn++
	return int(c.turn % uint64(n))
}

// account reads slice (or, for -1, the slice whose turn it is).
func (l *Ledger) account(ctx context.Context, accountID string, slice int) (Account, error) {
	n := l.known.get(accountID)
	if slice < 0 {
		slice = 0
		if n > 1 {
			slice = l.known.next(n)
		}
	}
	if slice == 0 {
		it, err := l.st.Get(ctx, accounts.Key(accountID))
		if err != nil {
			return Account{}, fmt.Errorf("credits: read account: %w", err)
		}
		a := AccountOf(accountID, it)
		l.known.set(accountID, a.Slices)
		return a, nil
	}
	it, err := l.st.Get(ctx, sliceKey(accountID, slice))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Account{}, fmt.Errorf("credits: read slice: %w", err)
	}
	return sliceOf(accountID, slice, max(n, slice+1), it), nil
}

// AccountFor is Account for a caller about to take need from the balance
// in a transaction of its own (HoldOps). On an account of several slices
// the slice it returns covers need, borrowed from the others if it ran
// low, or it fails with ErrInsufficient when a consistent snapshot of all
// of them cannot cover need. On an account of one slice it is Account: the
// change itself refuses what the balance cannot cover.
func (l *Ledger) AccountFor(ctx context.Context, accountID string, need int64) (Account, error) {
	slice := -1
	for n := 0; ; n++ {
		a, err := l.account(ctx, accountID, slice)
		if err != nil || a.Slices <= 1 || a.Balance >= need {
			return a, err
		}
		moved, err := l.refill(ctx, a, need)
		if err != nil {
			return Account{}, err
		}
		slice = a.Slice
		if err := l.again(ctx, n, moved); err != nil {
			return Account{}, err
		}
	}
}

// again paces the next attempt after a refill: at once if it moved
// credits, after a jittered wait if another change came first.
func (l *Ledger) again(ctx context.Context, n int, moved bool) error {
	if moved && n < maxRaces {
		return nil
	}
	return Raced(ctx, n)
}

// snapshot is every slice of an account as one consistent state.
type snapshot struct {
	slices []Account
	total  int64
}

// snapshot reads the slices between two reads of the move counter. Equal
// counters mean no move committed while the slices were read, so every
// credit moved is counted on exactly one side, and the sum is the total
// of a consistent cut: each slice at its read, changes on different
// slices being independent. Every move adds to the counter in its own
// transaction; moves are rare next to changes, so this seldom repeats.
func (l *Ledger) snapshot(ctx context.Context, accountID string) (snapshot, error) {
	for n := 0; ; n++ {
		before, err := l.moves(ctx, accountID)
		if err != nil {
			return snapshot{}, err
		}
		it, err := l.st.Get(ctx, accounts.Key(accountID))
		if err != nil {
			return snapshot{}, fmt.Errorf("credits: read account: %w", err)
		}
		a0 := AccountOf(accountID, it)
		s := snapshot{slices: []Account{a0}, total: a0.Balance}
		if a0.Slices > 1 {
			keys := make([]store.Key, 0, a0.Slices-1)
			for i := 1; i < a0.Slices; i++ {
				keys = append(keys, sliceKey(accountID, i))
			}
			got, err := l.st.BatchGet(ctx, keys)
			if err != nil {
				return snapshot{}, fmt.Errorf("credits: read slices: %w", err)
			}
			for i, k := range keys {
				a := sliceOf(accountID, i+1, a0.Slices, got[k.String()])
				s.slices = append(s.slices, a)
				s.total += a.Balance
			}
		}
		after, err := l.moves(ctx, accountID)
		if err != nil {
			return snapshot{}, err
		}
		if before == after {
			l.known.set(accountID, a0.Slices)
			return s, nil
		}
		if err := Raced(ctx, n); err != nil {
			return snapshot{}, err
		}
	}
}

func (l *Ledger) moves(ctx context.Context, accountID string) (int64, error) {
	it, err := l.st.Get(ctx, movesKey(accountID))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("credits: read moves: %w", err)
	}
	return it.Int(attrMoves), nil
}

// refill moves credits into slice a so that it holds need: from the
// richest other slices first, each giving at least half of what it has
// (so that refills stay rare) and no more than it has. It reports whether
// it moved; false with no error means another change came first. A
// consistent snapshot whose total is below need is ErrInsufficient.
func (l *Ledger) refill(ctx context.Context, a Account, need int64) (bool, error) {
	s, err := l.snapshot(ctx, a.ID)
	if err != nil {
		return false, err
	}
	if s.total < need {
		return false, ErrInsufficient
	}
	if a.Slice >= len(s.slices) {
		return false, fmt.Errorf("credits: slice %d of %d", a.Slice, len(s.slices))
	}
	lack := need - s.slices[a.Slice].Balance
	if lack <= 0 {
		return true, nil // refilled meanwhile
	}
	donors := slices.Clone(s.slices)
	slices.SortStableFunc(donors, func(x, y Account) int {
		switch {
		case x.Balance > y.Balance:
			return -1
		case x.Balance < y.Balance:
			return 1
		}
		return 0
	})
	delta := map[int]int64{}
	for _, d := range donors {
		if lack <= 0 {
			break
		}
		if d.Slice == a.Slice || d.Balance <= 0 {
			continue
		}
		x := min(d.Balance, max(lack, d.Balance/2))
		delta[d.Slice] -= x
		delta[a.Slice] += x
		lack -= x
	}
	err = l.st.Transact(ctx, l.moveOps(a.ID, s.slices, delta, nil))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrConditionFailed):
		return false, nil
	}
	return false, fmt.Errorf("credits: refill slice %d: %w", a.Slice, err)
}

// moveOps are the members of one move: each slice in delta changes by its
// amount and takes a ledgerAt past every one of theirs, conditional on the
// version the snapshot read; the move counter advances. set adds
// attributes to slice 0's update (which is then always a member).
func (l *Ledger) moveOps(accountID string, from []Account, delta map[int]int64, set map[string]any) []store.Op {
	at := l.now().UnixMilli()
	for i := range from {
		if _, ok := delta[i]; ok || i == 0 && set != nil {
			at = max(at, from[i].At)
		}
	}
	at++
	var ops []store.Op
	for i, s := range from {
		d, ok := delta[i]
		if !ok && (i != 0 || set == nil) {
			continue
		}
		u := store.Update{Add: map[string]int64{accounts.AttrBalance: d}, Set: map[string]any{attrAt: at}}
		if i > 0 {
			u.Set[attrSeq] = s.Seq
		} else {
			for k, v := range set {
				u.Set[k] = v
			}
		}
		ops = append(ops, store.UpdateOp(sliceKey(accountID, i), u, s.versionConds()...))
	}
	return append(ops, store.UpdateOp(movesKey(accountID), store.Update{Add: map[string]int64{attrMoves: 1}}))
}

// SetSlices splits the account's balance into n slices (2 to MaxSlices),
// spread evenly in one move: an operator's way to slice an account known
// to be busy before it is (the load rule, grow, slices it once it is). N
// never shrinks, so asking for fewer slices than there are changes nothing.
func (l *Ledger) SetSlices(ctx context.Context, accountID string, n int) error {
	return l.setSlices(ctx, accountID, n, maxRaces)
}

// growFrom is the first N the load rule gives an account of one slice.
const growFrom = 8

// grow is the load rule (docs/storage-design.md, "Charged calls"): a
// change that lost maxRaces races in a row on its slice (the request then
// answers 503) shows that the slice takes more changes than round trips
// allow, so the account's N doubles (1 to 8 first), up to MaxSlices. It
// tries a few times only: its caller is already failing.
func (l *Ledger) grow(ctx context.Context, accountID string) error {
	n := l.known.get(accountID)
	return l.setSlices(ctx, accountID, min(max(2*n, growFrom), MaxSlices), 8)
}

// Raced is the retry rule of every change of accountID's balance that
// lost its slice's condition, in the ledger (Apply, holds) or in a
// caller's own transaction (HoldOps under AccountFor): it waits before
// attempt n+1 as the package's Raced does, and past maxRaces, when the
// change fails, the load rule grows the account. n counts the balance
// races the change has lost so far, from 0.
func (l *Ledger) Raced(ctx context.Context, accountID string, n int) error {
	err := Raced(ctx, n)
	if err != nil && n >= maxRaces {
		return errors.Join(err, l.grow(ctx, accountID))
	}
	return err
}

func (l *Ledger) setSlices(ctx context.Context, accountID string, n, attempts int) error {
	if n < 2 || n > MaxSlices {
		return fmt.Errorf("credits: %d slices: want 2 to %d", n, MaxSlices)
	}
	for try := 0; ; try++ {
		s, err := l.snapshot(ctx, accountID)
		if err != nil {
			return err
		}
		if len(s.slices) >= n {
			return nil
		}
		from := s.slices
		for i := len(from); i < n; i++ {
			from = append(from, Account{ID: accountID, Slice: i, Slices: n})
		}
		delta := map[int]int64{}
		for i, a := range from {
			share := s.total / int64(n)
			if int64(i) < s.total%int64(n) {
				share++
			}
			if share != a.Balance {
				delta[i] = share - a.Balance
			}
		}
		ops := append(l.moveOps(accountID, from, delta, map[string]any{attrSlices: int64(n)}),
			store.PutOp(store.NewItem(slicedKey(accountID))))
		err = l.st.Transact(ctx, ops)
		switch {
		case err == nil:
			l.known.set(accountID, n)
			return nil
		case !errors.Is(err, store.ErrConditionFailed):
			return fmt.Errorf("credits: slice account: %w", err)
		case try+1 >= attempts:
			return fmt.Errorf("credits: slice account: %d attempts: %w", attempts, store.ErrUnavailable)
		}
		if err := Raced(ctx, try); err != nil {
			return err
		}
	}
}
