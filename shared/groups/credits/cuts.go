package credits

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
)

// Cuts (docs/storage-design.md, "Charged calls"). On a sliced account each
// slice orders its own entries, and an entry's account balanceAfter is
// known only once the entries of every slice before it are. A cut fixes
// that order after the fact: cut k records, from one consistent snapshot
// taken after reading cut k-1, each slice's sequence head and ledgerAt and
// the total balance.
//
//	acct#<acct>#cut | cut#<k, 12 digits>   heads, ats, total
//
// Interval k is the entries of each slice i with a sequence in
// (head[k-1][i], head[k][i]]; the ledger is interval after interval, by
// (time, slice, sequence) inside one. The newest entry of interval k
// leaves cut k's total, each older one what the newer one left minus its
// amount, so a balanceAfter is computed when read and never changes once
// shown: cuts are written once (put if absent) and entries only ever added
// after the newest cut. Inside an interval the order extends the order
// moves and changes happened in (slices.go), so each running sum is the
// sum of non-negative slices at a consistent cut, never negative.
type cut struct {
	K     int64   `json:"k"`
	Heads []int64 `json:"heads"`
	Ats   []int64 `json:"ats"`
	Total int64   `json:"total"`
}

func (c cut) head(i int) int64 {
	if i < len(c.Heads) {
		return c.Heads[i]
	}
	return 0
}

func cutKey(accountID string, k int64) store.Key {
	return store.Key{PK: "acct#" + accountID + "#cut", SK: fmt.Sprintf("cut#%012d", k)}
}

func decodeCut(it store.Item) (cut, error) {
	var c cut
	if err := it.Doc(&c); err != nil {
		return cut{}, fmt.Errorf("credits: decode cut: %w", err)
	}
	return c, nil
}

// latestCut is the newest cut, or cut 0 (nothing) when none was made.
func (l *Ledger) latestCut(ctx context.Context, accountID string) (cut, error) {
	page, err := l.st.Query(ctx, store.Query{PK: cutKey(accountID, 0).PK, Prefix: "cut#", Reverse: true, Limit: 1})
	if err != nil {
		return cut{}, fmt.Errorf("credits: read cut: %w", err)
	}
	if len(page.Items) == 0 {
		return cut{}, nil
	}
	return decodeCut(page.Items[0])
}

// readCut is cut k; cut 0 is the empty ledger.
func (l *Ledger) readCut(ctx context.Context, accountID string, k int64) (cut, bool, error) {
	if k == 0 {
		return cut{}, true, nil
	}
	it, err := l.st.Get(ctx, cutKey(accountID, k))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return cut{}, false, nil
	case err != nil:
		return cut{}, false, fmt.Errorf("credits: read cut: %w", err)
	}
	c, err := decodeCut(it)
	return c, err == nil, err
}

// mustCut is cut k, which exists: cuts are numbered without gaps.
func (l *Ledger) mustCut(ctx context.Context, accountID string, k int64) (cut, error) {
	c, ok, err := l.readCut(ctx, accountID, k)
	if err == nil && !ok {
		err = fmt.Errorf("credits: cut %d of %s missing", k, accountID)
	}
	return c, err
}

// Cut fixes the order of every entry committed so far and returns the
// newest cut: a new one when any slice's head moved since the last, made
// with one conditional put; when another process made it first, this one
// reads again.
func (l *Ledger) Cut(ctx context.Context, accountID string) (cut, error) {
	for n := 0; ; n++ {
		last, err := l.latestCut(ctx, accountID)
		if err != nil {
			return cut{}, err
		}
		snap, err := l.snapshot(ctx, accountID)
		if err != nil {
			return cut{}, err
		}
		next := cut{K: last.K + 1, Total: snap.total}
		moved := last.K == 0
		for i, s := range snap.slices {
			next.Heads = append(next.Heads, s.Seq)
			next.Ats = append(next.Ats, s.At)
			moved = moved || s.Seq != last.head(i)
		}
		if !moved {
			return last, nil
		}
		it := store.NewItem(cutKey(accountID, next.K))
		it.SetDoc(next)
		err = l.st.Put(ctx, it, store.NotExists())
		switch {
		case err == nil:
			return next, nil
		case !errors.Is(err, store.ErrConditionFailed):
			return cut{}, fmt.Errorf("credits: cut: %w", err)
		}
		if err := Raced(ctx, n); err != nil {
			return cut{}, err
		}
	}
}

// compareOrder orders entries as the ledger of a sliced account does
// inside one interval: by time, slice and sequence.
func compareOrder(a, b Entry) int {
	switch am, bm := a.OccurredAt.UnixMilli(), b.OccurredAt.UnixMilli(); {
	case am != bm:
		return cmpInt(am, bm)
	case a.Slice != b.Slice:
		return cmpInt(int64(a.Slice), int64(b.Slice))
	}
	return cmpInt(a.Seq, b.Seq)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sliceCursor is where a page of a sliced account's ledger stopped: in
// interval K, after the entry (At, Slice, Seq), or at the interval's
// newest (Top), with the balance the next older entry left.
type sliceCursor struct {
	K     int64 `json:"k"`
	Top   bool  `json:"t,omitempty"`
	At    int64 `json:"a,omitempty"`
	Slice int   `json:"s,omitempty"`
	Seq   int64 `json:"q,omitempty"`
	Bal   int64 `json:"b"`
}

const sliceCursorTag = "c"

func (c sliceCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(append([]byte(sliceCursorTag), b...))
}

var errCursor = apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))

func decodeSliceCursor(s string) (sliceCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) > 256 || !strings.HasPrefix(string(raw), sliceCursorTag+"{") {
		return sliceCursor{}, errCursor
	}
	var c sliceCursor
	if err := json.Unmarshal(raw[len(sliceCursorTag):], &c); err != nil || c.K < 1 || c.At < 0 || c.Slice < 0 || c.Slice >= MaxSlices || c.Seq < 0 {
		return sliceCursor{}, errCursor
	}
	return c, nil
}

// stream is one slice's entries of one interval, newest first, read a
// page at a time.
type stream struct {
	slice int
	floor int64  // entries at or below this sequence are older intervals'
	after string // the next page's exclusive upper bound
	buf   []Entry
	more  bool
}

// merger reads an interval's streams newest first, counting what it read.
type merger struct {
	l       *Ledger
	account string
	ss      []*stream
	page    int
	read    int
}

// interval opens interval hi.K's streams below position cur.
func (l *Ledger) interval(accountID string, hi, lo cut, cur sliceCursor, page int) *merger {
	m := &merger{l: l, account: accountID, page: page}
	for i := range hi.Heads {
		if hi.Heads[i] <= lo.head(i) {
			continue
		}
		bound := entrySK(hi.Ats[i], hi.Heads[i]+1)
		if !cur.Top {
			pos := entrySK(cur.At, cur.Seq)
			switch {
			case i > cur.Slice:
				pos = fmt.Sprintf("lgr#%013d", cur.At)
			case i < cur.Slice:
				pos = fmt.Sprintf("lgr#%013d", cur.At+1)
			}
			bound = min(bound, pos)
		}
		m.ss = append(m.ss, &stream{slice: i, floor: lo.head(i), after: bound, more: true})
	}
	return m
}

// next is the interval's next entry, newest first; false when none is left.
func (m *merger) next(ctx context.Context) (Entry, bool, error) {
	var best *stream
	for _, s := range m.ss {
		if len(s.buf) == 0 && s.more {
			page, err := m.l.st.Query(ctx, store.Query{PK: slicePK(m.account, s.slice), Prefix: "lgr#", After: s.after, Reverse: true, Limit: m.page})
			if err != nil {
				return Entry{}, false, fmt.Errorf("credits: list ledger: %w", err)
			}
			m.read += len(page.Items)
			s.more = page.More
			for _, it := range page.Items {
				e, err := decodeEntry(it)
				if err != nil {
					return Entry{}, false, err
				}
				if e.Seq <= s.floor {
					s.more = false
					break
				}
				s.buf = append(s.buf, e)
				s.after = it.Key().SK
			}
		}
		if len(s.buf) > 0 && (best == nil || compareOrder(s.buf[0], best.buf[0]) > 0) {
			best = s
		}
	}
	if best == nil {
		return Entry{}, false, nil
	}
	e := best.buf[0]
	best.buf = best.buf[1:]
	return e, true, nil
}

// listSliced is List on a sliced account: the first page cuts first, so
// its newest entry leaves the balance of that cut; pages go back interval
// by interval. Entries of one interval may be a few milliseconds older
// than some of the interval before (a change that committed across a cut,
// stamped by another process's clock): the order is the ledger's, and
// since and until select by occurredAt.
func (l *Ledger) listSliced(ctx context.Context, f ListFilter) ([]Entry, string, error) {
	since, until := f.Since.UnixMilli(), f.Until.UnixMilli()
	var cur sliceCursor
	if f.Cursor == "" {
		top, err := l.Cut(ctx, f.AccountID)
		if err != nil {
			return nil, "", err
		}
		if cur, err = l.before(ctx, f.AccountID, top, until); err != nil {
			return nil, "", err
		}
	} else {
		var err error
		if cur, err = decodeSliceCursor(f.Cursor); err != nil {
			return nil, "", err
		}
	}
	hi, ok, err := l.readCut(ctx, f.AccountID, cur.K)
	switch {
	case err != nil:
		return nil, "", err
	case !ok || !cur.Top && cur.Slice >= len(hi.Heads):
		return nil, "", errCursor
	}
	root := len(f.KeyPath) == 1
	read := 0
	var out []Entry
	for cur.K > 0 {
		if read >= scanBound {
			return out, cur.encode(), nil
		}
		lo, _, err := l.readCut(ctx, f.AccountID, cur.K-1)
		if err != nil {
			return nil, "", err
		}
		read++
		if newest(hi) < since {
			return out, "", nil // this interval and every older one are before since
		}
		if oldest(hi, lo) < until {
			m := l.interval(f.AccountID, hi, lo, cur, min(25, max(2, f.Limit/max(1, len(hi.Heads))+2)))
			for {
				e, ok, err := m.next(ctx)
				if err != nil {
					return nil, "", err
				}
				if !ok {
					// What interval 1 leaves is what the account held
					// before its ledger kept sequences: nothing, unless
					// it is older than that.
					if cur.Bal != lo.Total && lo.K > 0 {
						if f.Cursor != "" {
							return nil, "", errCursor
						}
						return nil, "", fmt.Errorf("credits: interval %d of %s leaves %d, cut %d says %d", cur.K, f.AccountID, cur.Bal, lo.K, lo.Total)
					}
					break
				}
				e.BalanceAfter = cur.Bal
				cur = sliceCursor{K: cur.K, At: e.OccurredAt.UnixMilli(), Slice: e.Slice, Seq: e.Seq, Bal: cur.Bal - e.Amount}
				if cur.At < since {
					break // the rest of this interval is older still
				}
				if cur.At < until && f.sees(e, root) {
					out = append(out, e)
					if len(out) == f.Limit {
						return out, cur.encode(), nil
					}
				}
				if read+m.read >= scanBound {
					return out, cur.encode(), nil
				}
			}
			read += m.read
		}
		cur, hi = sliceCursor{K: cur.K - 1, Top: true, Bal: lo.Total}, lo
	}
	return out, "", nil
}

// before is where a list ending at until starts: the newest interval
// that may hold an entry before until. Every slice's ledgerAt only grows,
// so once every slice of cut k-1 is at or past until, interval k and every
// newer one hold nothing before it: a binary search over the cuts finds
// the first such k in a few reads, however long the ledger. A slice that
// did not exist at a cut counts as at 0 there.
func (l *Ledger) before(ctx context.Context, accountID string, top cut, until int64) (sliceCursor, error) {
	earliest := func(c cut) int64 {
		if len(c.Ats) < len(top.Ats) {
			return 0
		}
		e := int64(0)
		for i, at := range c.Ats {
			if i == 0 || at < e {
				e = at
			}
		}
		return e
	}
	at := top
	if top.K > 1 {
		if prev, _, err := l.readCut(ctx, accountID, top.K-1); err != nil || earliest(prev) < until {
			return sliceCursor{K: top.K, Top: true, Bal: top.Total}, err
		}
		// Interval lo may hold an entry before until, interval hi not.
		lo, hi := int64(1), top.K
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			c, err := l.mustCut(ctx, accountID, mid-1)
			if err != nil {
				return sliceCursor{}, err
			}
			if earliest(c) < until {
				lo = mid
			} else {
				hi = mid
			}
		}
		c, err := l.mustCut(ctx, accountID, lo)
		if err != nil {
			return sliceCursor{}, err
		}
		at = c
	}
	return sliceCursor{K: at.K, Top: true, Bal: at.Total}, nil
}

// newest bounds the time of every entry up to cut c: a slice's entries
// are never later than its ledgerAt.
func newest(c cut) int64 {
	n := int64(0)
	for _, at := range c.Ats {
		n = max(n, at)
	}
	return n
}

// oldest bounds the time of interval hi.K's entries from below: an entry
// is never earlier than its slice's ledgerAt when it was read.
func oldest(hi, lo cut) int64 {
	o := int64(-1)
	for i := range hi.Heads {
		if hi.Heads[i] > lo.head(i) {
			at := int64(0)
			if i < len(lo.Ats) {
				at = lo.Ats[i]
			}
			if o < 0 || at < o {
				o = at
			}
		}
	}
	if o < 0 {
		return 1<<62 - 1 // no entries: nothing to read
	}
	return o
}
