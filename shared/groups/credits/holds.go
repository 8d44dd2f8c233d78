package credits

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/accounts"
)

// Hold is credits reserved before a metered operation runs. It ends exactly
// once: captured at the exact charge (the rest returned) or released.
type Hold struct {
	l         *Ledger
	accountID string
	ID        string
	Amount    int64
	// Captured is set on a hold an earlier attempt of the same call already
	// captured (HoldOnce), at Charged: it must not be captured again.
	Captured bool
	Charged  int64
	// Deadline is when the holder expects to have ended the hold: the
	// sweeper releases it only GraceAfterDeadline later (SweepHolds).
	Deadline time.Time
	// named is the audit event of the request that took the hold, for a
	// hold an earlier attempt of the call took (HoldOnce).
	named ChargeName
	// taken is set on a hold its holder took (Hold, HoldOnce), which only
	// it or another attempt of its call ends, unlike one a worker settles
	// for an effect that holds it (HoldOf): see Capture. ended is set once
	// this holder ended it: ending it again is ErrHoldEnded.
	taken, ended bool
}

// attrNamedBy and attrNamedAt are the name of the audit event that carries
// a hold taken in a request (ChargeName).
const (
	attrNamedBy = "namedBy"
	attrNamedAt = "namedAt"
)

// chargeNameOf is the name a hold's record keeps; zero for none.
func chargeNameOf(it store.Item) ChargeName {
	return ChargeName{RequestID: it.String(attrNamedBy), AtMilli: it.Int(attrNamedAt)}
}

// holdKey is where a hold taken on an account of one slice is, in its
// partition; slicedHoldKey where one taken on a sliced account is, in a
// partition of its own, so that a busy account's holds spread.
func holdKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "hold#" + id}
}

// attrHoldSlice is the slice a hold on a sliced account was taken from,
// which its end changes too.
const attrHoldSlice = "slice"

func slicedHoldKey(accountID, id string) store.Key {
	return store.Key{PK: "hold#" + accountID + "#" + id, SK: "hold"}
}

// attrInAccount marks the item at a call hold's sliced place that says the
// hold lives in the account's partition (heldElsewhere).
const attrInAccount = "inAccount"

// attrCall marks a hold taken in a request by Hold or HoldOnce, which that
// request ends (or a retry of its call takes over, or the sweep releases
// when neither did). Its debit is not the request's charge when taken: it
// is carried, netted with its refund, by whatever ends it (see end). So
// the request that took it charges exactly what it captured, whether it
// ended the hold or answered an error first, and the event of a request
// that died holding it, written or not, carries nothing the sweep must
// undo. A hold taken outside any request (a run's step) is ended by its
// worker, which reports it in its own event; one taken with HoldOps is
// committed with an effect that outlives the request (an order), whose
// event carries the debit.
const attrCall = "call"

// markerLife is how long a marker outlives its hold's taking: as long as a
// retry of the call may come (a stored response is kept 24 hours).
const markerLife = 25 * time.Hour

// heldElsewhere is the marker of a call's hold taken in the account's
// partition, at the place a sliced account keeps it.
func heldElsewhere(accountID, id string, now time.Time) store.Item {
	it := store.NewItem(slicedHoldKey(accountID, id))
	it[attrInAccount] = true
	it[store.AttrExpiresAt] = now.Add(markerLife).Unix()
	return it
}

// holdAt is where a hold taken on a as read is kept.
func holdAt(a Account, id string) store.Key {
	if a.Slices > 1 {
		return slicedHoldKey(a.ID, id)
	}
	return holdKey(a.ID, id)
}

// findHold reads a hold wherever it was taken: first where this process
// expects it (an account it knows to be sliced keeps new holds apart),
// then, if asked, the other place.
func (l *Ledger) findHold(ctx context.Context, accountID, id string, both bool) (store.Item, error) {
	at := []store.Key{holdKey(accountID, id), slicedHoldKey(accountID, id)}
	if l.known.get(accountID) > 1 {
		at[0], at[1] = at[1], at[0]
	}
	if !both {
		at = at[:1]
	}
	for _, k := range at {
		it, err := l.st.Get(ctx, k)
		if err == nil && it.Has(attrInAccount) {
			return l.st.Get(ctx, holdKey(accountID, id)) // a marker: the hold is in the account's partition
		}
		if !errors.Is(err, store.ErrNotFound) {
			return it, err
		}
	}
	return nil, store.ErrNotFound
}

// ErrHoldEnded means the hold was already captured or released: ending it
// again changes nothing, so a settlement retried after a crash is safe.
var ErrHoldEnded = errors.New("credits: hold already ended")

// ErrHoldLapsed means a hold its holder took (Hold, HoldOnce) was released
// by the sweep before the holder captured it: the holder outlived the
// hold's deadline and grace. The operation may have run, uncharged. It is
// a backing failure (store.ErrUnavailable), which a request answers with
// a 503 that asks for a retry with the same Idempotency-Key; that retry
// takes a fresh hold, runs the call again under its identity (which the
// service deduplicates) and charges it once.
var ErrHoldLapsed = fmt.Errorf("credits: the hold was released past its deadline before its capture: %w", store.ErrUnavailable)

// endedError is ErrHoldEnded with how the hold ended: its state and its
// charge.
type endedError struct {
	state   string
	charged int64
}

func (e *endedError) Error() string { return ErrHoldEnded.Error() + " (" + e.state + ")" }

func (e *endedError) Is(target error) bool { return target == ErrHoldEnded }

// HoldOps are the transaction members that take amountMicro from the
// account as read (a) as a new hold with the given id, for a caller that
// commits the hold with its own effect (a trading order and its hold exist
// together or not at all); the change's Committed is to be called once it
// commits. deadline is when the caller will have ended the hold if its
// process lives (a resting order's expiry); a hold still held
// GraceAfterDeadline later was orphaned by a crash and SweepHolds releases
// it. ErrInsufficient means the balance cannot cover the hold; a failed
// condition on the change's Ops[0] (IsRace) means another change
// committed first: read the account again and rebuild. a is what
// AccountFor read for amountMicro, so that on a sliced account its slice
// covers the hold.
func HoldOps(ctx context.Context, a Account, holdID string, amountMicro int64, reference string, now, deadline time.Time) ([]store.Op, *Change, error) {
	ch, err := a.Change(ctx, now, Move{Type: TypeHold, Amount: -amountMicro, Reference: holdID})
	if err != nil {
		return nil, nil, err
	}
	rec := store.NewItem(holdAt(a, holdID))
	if a.Slices > 1 {
		rec[attrHoldSlice] = int64(a.Slice)
	}
	rec["amount"] = amountMicro
	rec["state"] = "held"
	rec["reference"] = reference
	rec[attrDeadline] = deadline.Unix()
	if n := nameCharge(ctx); n.RequestID != "" {
		rec[attrNamedBy], rec[attrNamedAt] = n.RequestID, n.AtMilli
	}
	rec.SetDoc(ch.Entries[0].Attribution)
	ops := append(ch.Ops, store.PutOp(rec, store.NotExists()), store.PutOp(openHoldItem(a.ID, holdID, amountMicro, deadline)))
	return ops, ch, nil
}

// HoldOf is a hold taken earlier (with HoldOps or Hold) with the given
// deadline, to capture or release it from another process.
func (l *Ledger) HoldOf(accountID, holdID string, amountMicro int64, deadline time.Time) *Hold {
	return &Hold{l: l, accountID: accountID, ID: holdID, Amount: amountMicro, Deadline: deadline}
}

// Hold takes amountMicro from the balance, or fails with ErrInsufficient and
// changes nothing. The balance check and the debit are one conditional
// write, so concurrent holds can never take the balance below zero.
// lifetime bounds how long the caller keeps the hold (its request's or
// call's timeout): past it and GraceAfterDeadline, SweepHolds releases a
// hold a crash left behind.
func (l *Ledger) Hold(ctx context.Context, accountID string, amountMicro int64, reference string, lifetime time.Duration) (*Hold, error) {
	return l.hold(ctx, accountID, amountMicro, reference, ids.New("hld", l.now()), lifetime, false)
}

// HoldOnce is Hold for the call named callID (stable across its retries):
// a retry after a crash or a lost answer finds the hold the call holds,
// held or already captured, instead of taking a second one. A hold an
// attempt released (its call failed, or the sweep found its holder gone)
// charged nothing, so the next attempt takes a fresh one: the call's next
// round, under an id the call's first hold names (attrRound), so that
// every later attempt finds that one in turn.
func (l *Ledger) HoldOnce(ctx context.Context, accountID string, amountMicro int64, reference, callID string, lifetime time.Duration) (*Hold, error) {
	first := "hld_" + callID
	for turn := range 4 {
		// A hold a first attempt took where this process does not expect
		// it (the account was sliced in between, or this process has not
		// seen the slicing) is found on a later turn, in both places:
		// taking it again failed on its id.
		base, err := l.findHold(ctx, accountID, first, turn > 0)
		var move []store.Op
		id := first
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("credits: read hold: %w", err)
		default:
			round, it := base.Int(attrRound), base
			id = roundID(first, round)
			if round > 0 {
				// The round's hold committed with the counter: it is there.
				if it, err = l.findHold(ctx, accountID, id, true); err != nil {
					return nil, fmt.Errorf("credits: read hold %s: %w", id, err)
				}
			}
			if it.String("state") != "released" {
				h := &Hold{l: l, accountID: accountID, ID: id, Amount: it.Int("amount"),
					Captured: it.String("state") == "captured", Charged: it.Int("charged"),
					Deadline: time.Unix(it.Int(attrDeadline), 0), named: chargeNameOf(it), taken: true}
				inherit(ctx, h)
				return h, nil
			}
			cond := store.AttrEquals(attrRound, round)
			if round == 0 {
				cond = store.AttrNotExists(attrRound)
			}
			id = roundID(first, round+1)
			move = []store.Op{store.UpdateOp(base.Key(), store.Update{Set: map[string]any{attrRound: round + 1}}, cond)}
		}
		h, err := l.hold(ctx, accountID, amountMicro, reference, id, lifetime, true, move...)
		// A balance that cannot cover a second hold may be short by the
		// first attempt's: look for it everywhere before saying so.
		if !errors.Is(err, errHoldExists) && (turn > 0 || !errors.Is(err, ErrInsufficient)) {
			return h, err
		}
	}
	return nil, fmt.Errorf("credits: hold %s: taken and gone again", first)
}

// attrRound is, on a call's first hold, the round of the hold the call
// holds now: 0 (or none) for the first, n for the one taken under
// roundID(first, n) after the round before it was released. It moves in
// the transaction that takes the new round's hold, on condition that it
// did not move meanwhile: two attempts of a call never both take one.
const attrRound = "round"

// roundID is the id of a call's hold of round n, whose first is first.
func roundID(first string, n int64) string {
	if n == 0 {
		return first
	}
	return first + "_" + strconv.FormatInt(n, 10)
}

// inherit reports to the request what the hold it takes over from an
// earlier attempt of its call charged. A hold still held charged nothing
// yet: the retry ends it, and its own event carries what that charges
// (attrCall). A captured one was the charge of the attempt that captured
// it, whose event, if it was written at all, carried it under the name
// the hold keeps: the charge is owed to that name (owe), which the audit
// store keeps once, so it is audited once whether that attempt died
// before its event or only before its answer was stored.
func inherit(ctx context.Context, h *Hold) {
	if h.Captured {
		owe(ctx, h.Charged, h.named)
	}
}

// Inherit reports to ctx's request the hold holdID of amountMicro that an
// earlier attempt of its call took and committed with the call's own
// effect (an order, a wallet transaction; HoldOps), and that the retry
// finds by the call's dedupe key and answers. That attempt may have died
// before its audit event was written, or only before its answer was
// stored (or its stored answer expired) after writing it: the charge is
// owed to the event the hold names (see inherit), and what settles the
// hold later reports what it returns, as always.
func (l *Ledger) Inherit(ctx context.Context, accountID, holdID string, amountMicro int64) error {
	if noteOf(CauseOf(ctx)) == nil || amountMicro == 0 {
		return nil
	}
	var name ChargeName
	it, err := l.findHold(ctx, accountID, holdID, true)
	switch {
	case err == nil:
		name = chargeNameOf(it)
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("credits: read hold %s: %w", holdID, err)
	}
	owe(ctx, amountMicro, name)
	return nil
}

// errHoldExists: the hold's id is taken (by another attempt of its call).
var errHoldExists = errors.New("credits: hold exists")

// hold takes a hold with the given id; once, under an id of the call's,
// which its retries find (HoldOnce) rather than take a fresh one. with are
// more writes of the same transaction, whose failed condition means the
// hold was taken meanwhile (errHoldExists).
func (l *Ledger) hold(ctx context.Context, accountID string, amountMicro int64, reference, id string, lifetime time.Duration, once bool, with ...store.Op) (*Hold, error) {
	if amountMicro < 0 {
		return nil, fmt.Errorf("credits: negative hold %d", amountMicro)
	}
	now := l.now()
	// Whole seconds, as stored (a retry's HoldOnce sees the same deadline),
	// rounded up: the sweep never counts from before the holder's own.
	h := &Hold{l: l, accountID: accountID, ID: id, Amount: amountMicro, Deadline: time.Unix(now.Add(lifetime+time.Second-1).Unix(), 0), taken: true}
	iRec, iOther, iWith := -1, -1, -1
	err := l.Apply(ctx, accountID, func(a Account) ([]store.Op, *Change, error) {
		iRec, iOther, iWith = -1, -1, -1
		ops, ch, err := HoldOps(ctx, a, h.ID, amountMicro, reference, now, h.Deadline)
		if err != nil {
			return ops, ch, err
		}
		iRec = len(ch.Ops)
		if CauseOf(ctx).Request() != nil {
			ops[iRec].Item[attrCall] = true
			ch.note = nil // whatever ends the hold carries its debit
		}
		if once && a.Slices <= 1 {
			// The id names one hold wherever it lives. A call's hold taken
			// in the account's partition leaves a marker where the sliced
			// account would keep it, so a retry that reads the account as
			// sliced finds the id taken instead of debiting a second hold
			// beside it (and overwriting its sweep index entry). The
			// marker is written while the account is quiet (one slice);
			// a sliced account's holds add nothing to its own partition.
			iOther = len(ops)
			ops = append(ops, store.PutOp(heldElsewhere(a.ID, h.ID, now), store.NotExists()))
		}
		if len(with) > 0 {
			iWith = len(ops)
			ops = append(ops, with...)
		}
		return ops, ch, err
	})
	var tx *store.TxError
	switch {
	case errors.Is(err, ErrInsufficient):
		return nil, ErrInsufficient
	case errors.As(err, &tx) && (tx.Index == iRec || tx.Index == iOther || iWith >= 0 && tx.Index >= iWith):
		return nil, errHoldExists
	case err != nil:
		return nil, fmt.Errorf("credits: hold: %w", err)
	}
	return h, nil
}

// Capture charges exactMicro (at most the held amount) and returns the rest
// to the balance; Charged is then what the hold charged. A hold its holder
// took that another attempt of its call captured first (a retry that took
// it over) is that attempt's charge, which its event carries: Capture
// keeps it and reports it in Charged. One the sweep released first is
// ErrHoldLapsed. A hold a worker settles (HoldOf) ended before is
// ErrHoldEnded, whose settlement is then done.
func (h *Hold) Capture(ctx context.Context, exactMicro int64) error {
	switch {
	case h.ended:
		return ErrHoldEnded
	case h.Captured:
		return nil // an earlier attempt of the call captured it
	case exactMicro < 0 || exactMicro > h.Amount:
		return fmt.Errorf("credits: capture %d outside hold of %d", exactMicro, h.Amount)
	}
	err := h.end(ctx, "captured", exactMicro)
	var ended *endedError
	switch {
	case err == nil:
		h.Charged = exactMicro
	case errors.As(err, &ended) && h.taken && ended.state == "captured":
		h.ended, h.Charged = true, ended.charged
		return nil
	case errors.As(err, &ended) && h.taken:
		return fmt.Errorf("credits: capture hold %s: %w", h.ID, ErrHoldLapsed)
	}
	return err
}

// Release returns the whole hold to the balance.
func (h *Hold) Release(ctx context.Context) error {
	if h.ended {
		return ErrHoldEnded
	}
	return h.end(ctx, "released", 0)
}

// end settles the hold. In a request the request is charged (its audit
// event shows it); outside one (a worker, the sweeper) the settlement is
// attributed to whoever took the hold, with its own audit event named by
// SettledBy.
func (h *Hold) end(ctx context.Context, state string, chargedMicro int64) error {
	for n := 0; ; n++ {
		a, rec, hk, err := h.l.readHold(ctx, h.accountID, h.ID)
		if err != nil {
			return fmt.Errorf("credits: %s hold %s: %w", state, h.ID, err)
		}
		if rec == nil {
			return ErrHoldEnded
		}
		if st := rec.String("state"); st != "held" {
			return &endedError{state: st, charged: rec.Int("charged")}
		}
		cause := CauseOf(ctx)
		attr, note, event := cause.Attribution(), noteOf(cause), ""
		own := rec.Has(attrCall)
		switch {
		case note != nil: // a request's: its own event carries the change
		case own && chargedMicro == 0:
			// A request's own hold released outside it (the sweep): the
			// debit no event carried is returned, nothing was charged, and
			// the request's event, if it was written, is its only one.
			_ = rec.Doc(&attr)
		case len(attr.KeyPath) > 0: // a worker acting for a key (a run's step)
			event = cause.SettledBy(attr.Operation)
		default: // a worker or the sweeper settling whoever took the hold
			_ = rec.Doc(&attr) // a hold taken before attribution was kept has none
			event = cause.SettledBy("credits.holds.settle")
		}
		var moves []Move
		if state == "captured" {
			moves = append(moves, Move{Type: TypeCapture, Charged: chargedMicro, Reference: h.ID})
		}
		if refund := h.Amount - chargedMicro; refund > 0 {
			moves = append(moves, Move{Type: TypeRelease, Amount: refund, Reference: h.ID})
		}
		if own && len(moves) > 0 {
			// The hold's debit was carried by no event (attrCall): its end
			// carries it with the refund, so the change charges what was
			// captured.
			moves[0].Unaudited = rec.Int("amount")
		}
		ch, err := a.change(h.l.now(), attr, note, event, moves)
		if err != nil {
			return err
		}
		ops := append([]store.Op{
			store.UpdateOp(hk, store.Update{Set: map[string]any{"state": state, "charged": chargedMicro}}, store.AttrEquals("state", "held")),
			store.DeleteOp(openHoldKey(h.accountID, h.ID, h.Deadline)),
		}, ch.Ops...)
		err = h.l.st.Transact(ctx, ops)
		var tx *store.TxError
		switch {
		case err == nil:
			h.ended = true
			ch.Committed()
			return nil
		case errors.As(err, &tx) && tx.Index == 0:
			continue // ended meanwhile: the next read says how
		case IsRace(err, ops, ch):
			if err := h.l.Raced(ctx, h.accountID, n); err != nil {
				return err
			}
		default:
			return fmt.Errorf("credits: %s hold %s: %w", state, h.ID, err)
		}
	}
}

// readHold reads a hold and the slice its end will change: the slice the
// hold was taken from. The end reads the hold, so it depends on it, and on
// one slice that dependency is the slice's own order: a cut never counts
// an end without its hold. On an account of one slice both are read in
// one batch as always; a hold taken on a sliced account is read first,
// then its slice. A hold that is nowhere is nil.
func (l *Ledger) readHold(ctx context.Context, accountID, id string) (Account, store.Item, store.Key, error) {
	if l.known.get(accountID) > 1 {
		sk := slicedHoldKey(accountID, id)
		rec, err := l.st.Get(ctx, sk)
		switch {
		case err == nil && rec.Has(attrInAccount):
			// A marker: the hold is in the account's partition.
		case err == nil:
			a, err := l.account(ctx, accountID, int(rec.Int(attrHoldSlice)))
			return a, rec, sk, err
		case !errors.Is(err, store.ErrNotFound):
			return Account{}, nil, sk, err
		}
	}
	ak, hk := accounts.Key(accountID), holdKey(accountID, id)
	got, err := l.st.BatchGet(ctx, []store.Key{ak, hk})
	if err != nil {
		return Account{}, nil, hk, err
	}
	a := AccountOf(accountID, got[ak.String()])
	known := l.known.get(accountID) > 1
	l.known.set(accountID, a.Slices)
	if rec, ok := got[hk.String()]; ok || a.Slices <= 1 || known {
		return a, rec, hk, nil
	}
	return l.readHold(ctx, accountID, id)
}

// Charged is what an ended hold charged (0 for one released, by its
// holder or by the sweeper): the truth a holder reads when ending it again
// reports ErrHoldEnded.
func (l *Ledger) Charged(ctx context.Context, accountID, holdID string) (int64, error) {
	it, err := l.findHold(ctx, accountID, holdID, true)
	if err != nil {
		return 0, fmt.Errorf("credits: read hold %s: %w", holdID, err)
	}
	return it.Int("charged"), nil
}

// Entries lists the account's ledger, oldest first (for audits and tests):
// on a sliced account every slice's entries, by (time, slice, sequence),
// each with its slice's balance after it.
func (l *Ledger) Entries(ctx context.Context, accountID string, limit int) ([]Entry, error) {
	it, err := l.st.Get(ctx, accounts.Key(accountID))
	if err != nil {
		return nil, fmt.Errorf("credits: entries: %w", err)
	}
	n := SlicesOf(it)
	var out []Entry
	for slice := range n {
		page, err := l.st.Query(ctx, store.Query{PK: slicePK(accountID, slice), Prefix: "lgr#", Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("credits: entries: %w", err)
		}
		for _, it := range page.Items {
			e, err := decodeEntry(it)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	if n > 1 {
		slices.SortStableFunc(out, compareOrder)
	}
	return out, nil
}
