package credits

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/credits/creditstest"
)

// recorder is a real store that writes down every operation's keys.
type recorder struct {
	store.Store
	mu  sync.Mutex
	ops []string
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, s)
}

func (r *recorder) Get(ctx context.Context, k store.Key) (store.Item, error) {
	r.note("get " + k.String())
	return r.Store.Get(ctx, k)
}

func (r *recorder) BatchGet(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	r.note("batchget " + strings.Join(s, " "))
	return r.Store.BatchGet(ctx, keys)
}

func (r *recorder) Query(ctx context.Context, q store.Query) (store.Page, error) {
	r.note("query " + q.PK)
	return r.Store.Query(ctx, q)
}

func (r *recorder) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	r.note("put " + it.Key().String())
	return r.Store.Put(ctx, it, conds...)
}

func (r *recorder) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	r.note("update " + k.String())
	return r.Store.Update(ctx, k, u, conds...)
}

func (r *recorder) Transact(ctx context.Context, ops []store.Op) error {
	kinds := map[store.OpKind]string{store.OpPut: "put", store.OpUpdate: "update", store.OpDelete: "delete", store.OpCheck: "check"}
	s := make([]string, len(ops))
	for i, op := range ops {
		s[i] = kinds[op.Kind] + " " + op.Key.String()
	}
	r.note("transact " + strings.Join(s, "; "))
	return r.Store.Transact(ctx, ops)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	times := regexp.MustCompile(`lgr#\d{13}#`)
	index := regexp.MustCompile(`holds#[^|]*\|[^ ;]*`)
	out := make([]string, len(r.ops))
	for i, s := range r.ops {
		out[i] = index.ReplaceAllString(times.ReplaceAllString(s, "lgr#T#"), "holds#H|D")
	}
	r.ops = nil
	return out
}

func open(t *testing.T, st store.Store, micro int64) string {
	t.Helper()
	if err := st.Transact(context.Background(), OpenAccountOps("acct_s", micro, "test", time.Now())); err != nil {
		t.Fatal(err)
	}
	return "acct_s"
}

// sweptBefore leaves the sweep cursor where a sweeper running all along
// would have left it, at the hour before now's: a store's first sweep
// walks a day of empty index buckets (SweepLookback, 800 queries), which
// the tests of the first sweep prove and the others only wait for.
func sweptBefore(t *testing.T, st store.Store, now time.Time) {
	t.Helper()
	it := store.NewItem(sweepCursor)
	it["hour"] = now.Unix()/3600 - 1
	if err := st.Put(context.Background(), it); err != nil {
		t.Fatal(err)
	}
}

// listAll pages through the root key's ledger, newest first.
func listAll(t *testing.T, l *Ledger, acct string, limit int) []Entry {
	t.Helper()
	f := ListFilter{Filter: audit.Filter{Viewer: audit.Viewer{AccountID: acct, KeyPath: []string{"key_root"}},
		Since: time.Now().Add(-time.Hour), Until: time.Now().Add(time.Hour), Limit: limit}}
	var out []Entry
	for {
		page, next, err := l.List(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		f.Cursor = next
	}
}

// reconciles checks the root ledger: newest first, each entry leaves what
// the older one left plus its amount, never below zero, the newest leaves
// balance and the oldest started from nothing.
func reconciles(t *testing.T, entries []Entry, balance int64) {
	t.Helper()
	if len(entries) == 0 || entries[0].BalanceAfter != balance {
		t.Fatalf("newest of %d entries %+v, balance %d", len(entries), entries, balance)
	}
	seen := map[string]bool{}
	for i, e := range entries {
		before := int64(0)
		if i+1 < len(entries) {
			before = entries[i+1].BalanceAfter
		}
		if e.BalanceAfter < 0 || e.BalanceAfter != before+e.Amount || seen[e.ID] {
			t.Fatalf("entry %d of %d %+v after %d (seen %v)", i, len(entries), e, before, seen[e.ID])
		}
		seen[e.ID] = true
	}
}

// slicesNeverNegative reads every slice as it is now.
func slicesNeverNegative(t *testing.T, l *Ledger, acct string) int64 {
	t.Helper()
	s, err := l.snapshot(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.slices {
		if a.Balance < 0 {
			t.Fatalf("slice %d at %d", a.Slice, a.Balance)
		}
	}
	return s.total
}

func TestAnAccountOfOneSliceReadsAndWritesWhatItAlwaysDid(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			rec := &recorder{Store: b.Open(t, time.Now)}
			acct := open(t, rec, 1_000_000)
			l := NewLedger(rec, time.Now)
			ctx := context.Background()
			rec.take()
			h, err := l.HoldOnce(ctx, acct, 300_000, "invoke", "c1", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Capture(ctx, 100_000); err != nil {
				t.Fatal(err)
			}
			if bal, err := l.Balance(ctx, acct); err != nil || bal != 900_000 {
				t.Fatalf("balance %d (%v)", bal, err)
			}
			want := []string{
				"get acct#acct_s|hold#hld_c1",
				"get acct#acct_s|account",
				// A call's hold also marks its id where a sliced account would keep it.
				"transact update acct#acct_s|account; put acct#acct_s|lgr#T#000000000002; put acct#acct_s|hold#hld_c1; put holds#H|D; put hold#acct_s#hld_c1|hold",
				"batchget acct#acct_s|account acct#acct_s|hold#hld_c1",
				"transact update acct#acct_s|hold#hld_c1; delete holds#H|D; update acct#acct_s|account; put acct#acct_s|lgr#T#000000000003; put acct#acct_s|lgr#T#000000000004",
				"get acct#acct_s|account",
			}
			if got := rec.take(); !slices.Equal(got, want) {
				t.Fatalf("operations\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			page, err := rec.Query(ctx, store.Query{PK: "acct#" + acct})
			if err != nil {
				t.Fatal(err)
			}
			var attrs []string
			for _, it := range page.Items {
				if it.Key().SK == "account" {
					for k := range it {
						attrs = append(attrs, k)
					}
				}
			}
			sort.Strings(attrs)
			if len(page.Items) != 6 || strings.Join(attrs, ",") != "balance,createdAt,ledgerAt,ledgerSeq,pk,sk" {
				t.Fatalf("%d items, account attributes %v", len(page.Items), attrs)
			}
			reconciles(t, listAll(t, l, acct, 2), 900_000)
		})
	}
}

// charge takes a hold and captures all of it, as a charged call does.
// sliced is a ledger on b whose new account holds grant micro-credits in n
// slices.
func sliced(t *testing.T, b teststores.Backend, grant int64, n int) (store.Store, *Ledger, string) {
	t.Helper()
	st := b.Open(t, time.Now)
	acct := open(t, st, grant)
	l := NewLedger(st, time.Now)
	if err := l.SetSlices(context.Background(), acct, n); err != nil {
		t.Fatal(err)
	}
	return st, l, acct
}

func charge(ctx context.Context, l *Ledger, acct string, micro int64) error {
	h, err := l.Hold(ctx, acct, micro, "op", time.Minute)
	if err != nil {
		return err
	}
	return h.Capture(ctx, micro)
}

func TestConcurrentChargesOnEightSlicesNeverTakeASliceOrTheTotalBelowZero(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			// 48 charges of 25,000 against 40 of them; on the emulator,
			// which serves one request at a time, 20 against 16: each
			// slice still covers two, and the rest refill.
			grant, charges := int64(1_000_000), 48
			if b.Name != teststores.Embedded.Name {
				grant, charges = 400_000, 20
			}
			fits := int(grant / 25_000)
			st, l, acct := sliced(t, b, grant, 8)
			ctx := context.Background()
			var wg sync.WaitGroup
			var mu sync.Mutex
			charged, refused := 0, 0
			for range charges {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Each goroutine its own process: slices taken in its own turn.
					err := charge(ctx, NewLedger(st, time.Now), acct, 25_000)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						charged++
					case errors.Is(err, ErrInsufficient):
						refused++
					default:
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			bal, err := l.Balance(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			if charged != fits || refused != charges-fits || bal != 0 || slicesNeverNegative(t, l, acct) != 0 {
				t.Fatalf("charged %d, refused %d, balance %d; want %d, %d, 0", charged, refused, bal, fits, charges-fits)
			}
			entries := listAll(t, l, acct, 50)
			reconciles(t, entries, 0)
			sum := int64(0)
			for _, e := range entries {
				sum += e.Amount
			}
			if all, _ := l.Entries(ctx, acct, 0); sum != bal || len(all) != len(entries) {
				t.Fatalf("ledger sums to %d over %d entries (%d written), balance %d", sum, len(entries), len(all), bal)
			}
		})
	}
}

func TestInsufficientExactlyWhenTheTotalIsShort(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			_, l, acct := sliced(t, b, 10, 4)
			ctx := context.Background()
			if err := charge(ctx, l, acct, 11); !errors.Is(err, ErrInsufficient) {
				t.Fatalf("11 of 10: %v", err)
			}
			// 10 is spread 3, 3, 2, 2: the slice charged borrows from all three others.
			if err := charge(ctx, l, acct, 10); err != nil {
				t.Fatalf("10 of 10: %v", err)
			}
			if bal, _ := l.Balance(ctx, acct); bal != 0 || slicesNeverNegative(t, l, acct) != 0 {
				t.Fatalf("balance %d", bal)
			}
			reconciles(t, listAll(t, l, acct, 3), 0)
		})
	}
}

// Refill under contention: slices run dry one after another while others
// charge, and every charge the total covers is made.
func TestRefillUnderContentionChargesEverythingTheTotalCovers(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st, l, acct := sliced(t, b, 100_000, 4)
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, 21)
			for range 21 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- charge(ctx, NewLedger(st, time.Now), acct, 5_000)
				}()
			}
			wg.Wait()
			close(errs)
			refused := 0
			for err := range errs {
				switch {
				case errors.Is(err, ErrInsufficient):
					refused++
				case err != nil:
					t.Fatal(err)
				}
			}
			if bal, _ := l.Balance(ctx, acct); refused != 1 || bal != 0 {
				t.Fatalf("refused %d, balance %d; want 1, 0", refused, bal)
			}
			reconciles(t, listAll(t, l, acct, 10), 0)
		})
	}
}

func TestAShownBalanceAfterNeverChangesWhileChangesCommit(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st, l, acct := sliced(t, b, 10_000_000, 8)
			ctx := context.Background()
			shown := map[string]int64{}
			for round := range 4 {
				var wg sync.WaitGroup
				for range 6 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := charge(ctx, NewLedger(st, time.Now), acct, 1_000); err != nil {
							t.Error(err)
						}
					}()
				}
				// Read while they commit: what is shown is fixed.
				entries := listAll(t, l, acct, 4)
				wg.Wait()
				for _, e := range entries {
					if was, ok := shown[e.ID]; ok && was != e.BalanceAfter {
						t.Fatalf("round %d: %s showed %d, now %d", round, e.ID, was, e.BalanceAfter)
					}
					shown[e.ID] = e.BalanceAfter
				}
			}
			bal, _ := l.Balance(ctx, acct)
			entries := listAll(t, l, acct, 5)
			reconciles(t, entries, bal)
			for _, e := range entries {
				if was, ok := shown[e.ID]; ok && was != e.BalanceAfter {
					t.Fatalf("%s showed %d, now %d", e.ID, was, e.BalanceAfter)
				}
			}
		})
	}
}

func TestPagingAcrossIntervalsIsGaplessAndDuplicateFree(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			_, l, acct := sliced(t, b, 1_000_000, 3)
			ctx := context.Background()
			// Each round ends with a cut (the first page of a list), so
			// the ledger is several intervals of entries on every slice.
			for round := range 4 {
				for i := range 5 {
					if err := charge(ctx, l, acct, int64(100*(round+1)+i)); err != nil {
						t.Fatal(err)
					}
				}
				listAll(t, l, acct, 1000)
			}
			all, err := l.Entries(ctx, acct, 0)
			if err != nil {
				t.Fatal(err)
			}
			bal, _ := l.Balance(ctx, acct)
			for _, limit := range []int{1, 2, 7, 100} {
				t.Run(fmt.Sprint(limit), func(t *testing.T) {
					got := listAll(t, l, acct, limit)
					reconciles(t, got, bal)
					if len(got) != len(all) {
						t.Fatalf("%d entries listed, %d written", len(got), len(all))
					}
				})
			}
		})
	}
}

// A hold taken before the account was sliced is found where it is, by a
// process that never saw the account, and a retried call finds the hold
// its first attempt took on the sliced account.
func TestHoldsAreFoundWhereverTheyWereTaken(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			acct := open(t, st, 1_000_000)
			ctx := context.Background()
			l := NewLedger(st, time.Now)
			before, err := l.Hold(ctx, acct, 100_000, "invoke", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.SetSlices(ctx, acct, 4); err != nil {
				t.Fatal(err)
			}
			if err := NewLedger(st, time.Now).HoldOf(acct, before.ID, before.Amount, before.Deadline).Capture(ctx, 40_000); err != nil {
				t.Fatal(err)
			}
			if c, err := NewLedger(st, time.Now).Charged(ctx, acct, before.ID); err != nil || c != 40_000 {
				t.Fatalf("charged %d (%v)", c, err)
			}
			first, err := l.HoldOnce(ctx, acct, 50_000, "invoke", "call_1", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			retry, err := NewLedger(st, time.Now).HoldOnce(ctx, acct, 50_000, "invoke", "call_1", time.Minute)
			if err != nil || retry.ID != first.ID || retry.Captured {
				t.Fatalf("retry found %+v (%v)", retry, err)
			}
			if err := retry.Capture(ctx, 50_000); err != nil {
				t.Fatal(err)
			}
			// The first attempt finds the retry's capture and answers it.
			if err := first.Capture(ctx, 50_000); err != nil || first.Charged != 50_000 {
				t.Fatalf("second capture: %v, charged %d; want the retry's 50000", err, first.Charged)
			}
			bal, _ := l.Balance(ctx, acct)
			if bal != 1_000_000-40_000-50_000 {
				t.Fatalf("balance %d", bal)
			}
			reconciles(t, listAll(t, l, acct, 3), bal)
		})
	}
}

// The scheduled pass cuts every sliced account, so that an interval is
// short whether or not anyone lists the ledger, and writes nothing for an
// account whose slices did not move.
func TestTheScheduledPassCutsEverySlicedAccount(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			_, l, acct := sliced(t, b, 1_000_000, 4)
			ctx := context.Background()
			for range 6 {
				if err := charge(ctx, l, acct, 1_000); err != nil {
					t.Fatal(err)
				}
			}
			for pass := range 2 {
				if err := l.CutSliced(ctx); err != nil {
					t.Fatal(err)
				}
				c, err := l.latestCut(ctx, acct)
				if err != nil {
					t.Fatal(err)
				}
				s, err := l.snapshot(ctx, acct)
				if err != nil {
					t.Fatal(err)
				}
				for i, a := range s.slices {
					if c.head(i) != a.Seq {
						t.Fatalf("pass %d: cut %d heads %v, slice %d at %d", pass, c.K, c.Heads, i, a.Seq)
					}
				}
				if c.K != 1 || c.Total != 1_000_000-6_000 {
					t.Fatalf("pass %d: cut %+v", pass, c)
				}
			}
		})
	}
}

// The load rule: a change that loses every race it may (a 503, as before)
// slices the account, whose next change then commits on a slice.
func TestAnAccountWhoseChangesKeepLosingRacesIsSliced(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := &creditstest.BalanceLoser{Store: b.Open(t, time.Now)}
			acct := open(t, st, 1_000_000)
			l := NewLedger(st, time.Now)
			ctx := context.Background()
			st.Lose(maxRaces + 1)
			if _, err := l.Hold(ctx, acct, 1_000, "op", time.Minute); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("hold after %d lost races: %v", maxRaces+1, err)
			}
			s, err := l.snapshot(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.slices) != growFrom || s.total != 1_000_000 || s.slices[growFrom-1].Balance != 1_000_000/growFrom {
				t.Fatalf("%d slices, total %d, last %d", len(s.slices), s.total, s.slices[growFrom-1].Balance)
			}
			if err := charge(ctx, l, acct, 1_000); err != nil {
				t.Fatal(err)
			}
			reconciles(t, listAll(t, l, acct, 10), 999_000)
		})
	}
}

// A sliced account's ledger selects by occurredAt across intervals, and
// refuses a cursor it did not make, including one from before the account
// was sliced.
func TestASlicedLedgerSelectsByTimeAndRefusesForeignCursors(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			clk := testclock.New(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
			st := b.Open(t, clk.Now)
			acct := "acct_s"
			if err := st.Transact(context.Background(), OpenAccountOps(acct, 1_000_000, "test", clk.Now())); err != nil {
				t.Fatal(err)
			}
			l := NewLedger(st, clk.Now)
			ctx := context.Background()
			viewer := audit.Viewer{AccountID: acct, KeyPath: []string{"key_root"}}
			list := func(since, until time.Time, limit int, cursor string) ([]Entry, string, error) {
				return l.List(ctx, ListFilter{Filter: audit.Filter{Viewer: viewer, Since: since, Until: until, Limit: limit, Cursor: cursor}})
			}
			_, old, err := list(clk.Now().Add(-time.Hour), clk.Now().Add(time.Hour), 1, "")
			if err != nil || old == "" {
				t.Fatalf("cursor %q (%v)", old, err)
			}
			if err := l.SetSlices(ctx, acct, 3); err != nil {
				t.Fatal(err)
			}
			// A charge a minute, a cut every other minute.
			start := clk.Now()
			for i := range 6 {
				clk.Advance(time.Minute)
				if err := charge(ctx, l, acct, 1_000); err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 {
					if _, err := l.Cut(ctx, acct); err != nil {
						t.Fatal(err)
					}
				}
			}
			clk.Advance(time.Minute)
			// Minutes 2 to 4 hold the charges of minutes 2, 3 and 4: a hold and a capture each.
			var got []Entry
			for cursor := ""; ; {
				page, next, err := list(start.Add(2*time.Minute), start.Add(5*time.Minute), 1, cursor)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page...)
				if cursor = next; cursor == "" {
					break
				}
			}
			if len(got) != 6 {
				t.Fatalf("%d entries in minutes 2 to 4", len(got))
			}
			for _, e := range got {
				if m := e.OccurredAt.Sub(start); m < 2*time.Minute || m >= 5*time.Minute {
					t.Fatalf("entry at %v", m)
				}
			}
			for _, cursor := range []string{old, "bm90IGEgY3Vyc29y", sliceCursor{K: 99, Top: true}.encode(), sliceCursor{K: 1, Slice: 7}.encode()} {
				var apiErr *apierr.Error
				if _, _, err := list(start, clk.Now(), 10, cursor); !errors.As(err, &apiErr) || apiErr.GetStatus() != 400 {
					t.Fatalf("cursor %q: %v", cursor, err)
				}
			}
		})
	}
}

// Slicing an account while its changes commit loses nothing: changes read
// before a move retry, holds taken before are ended where they are, and
// the ledger still adds up to what was charged.
func TestSlicingWhileChargesCommitLosesNothing(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			acct := open(t, st, 10_000_000)
			l := NewLedger(st, time.Now)
			ctx := context.Background()
			var wg sync.WaitGroup
			var mu sync.Mutex
			captured := int64(0)
			// The emulator serves one request at a time, so on it 24
			// racing processes queue for minutes; 8 still hold the
			// account while it is sliced twice.
			workers := 24
			if b.Name != teststores.Embedded.Name {
				workers = 8
			}
			for i := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := NewLedger(st, time.Now)
					for j := range 3 {
						h, err := p.Hold(ctx, acct, 50_000, "op", time.Minute)
						if err != nil {
							t.Error(err)
							return
						}
						// Ended by yet another process, as a worker would.
						end := NewLedger(st, time.Now).HoldOf(acct, h.ID, h.Amount, h.Deadline)
						if (i+j)%3 == 0 {
							err = end.Release(ctx)
						} else {
							err = end.Capture(ctx, 20_000)
							mu.Lock()
							captured += 20_000
							mu.Unlock()
						}
						if err != nil {
							t.Error(err)
						}
					}
				}()
			}
			for _, n := range []int{4, 8} {
				if err := l.SetSlices(ctx, acct, n); err != nil {
					t.Fatal(err)
				}
			}
			wg.Wait()
			bal, err := l.Balance(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			if bal != 10_000_000-captured || slicesNeverNegative(t, l, acct) != bal {
				t.Fatalf("balance %d, captured %d", bal, captured)
			}
			entries := listAll(t, l, acct, 9)
			reconciles(t, entries, bal)
			if all, _ := l.Entries(ctx, acct, 0); len(all) != len(entries) || len(entries) != 1+workers*3*2+workers*2 {
				t.Fatalf("%d entries listed, %d written", len(entries), len(all))
			}
		})
	}
}

// A list that ends long before now starts at the interval that holds its
// end, found among many cuts in a few reads, and lists exactly the
// entries before it.
func TestAListEndingInThePastStartsAtItsInterval(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			clk := testclock.New(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
			rec := &recorder{Store: b.Open(t, clk.Now)}
			acct := "acct_s"
			if err := rec.Transact(context.Background(), OpenAccountOps(acct, 1_000_000, "test", clk.Now())); err != nil {
				t.Fatal(err)
			}
			l := NewLedger(rec, clk.Now)
			ctx := context.Background()
			if err := l.SetSlices(ctx, acct, 2); err != nil {
				t.Fatal(err)
			}
			start := clk.Now()
			for range 40 {
				clk.Advance(time.Minute)
				for range 2 {
					if err := charge(ctx, l, acct, 1_000); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := l.Cut(ctx, acct); err != nil {
					t.Fatal(err)
				}
			}
			until := start.Add(5*time.Minute + 30*time.Second)
			rec.take()
			got, _, err := l.List(ctx, ListFilter{Filter: audit.Filter{Viewer: audit.Viewer{AccountID: acct, KeyPath: []string{"key_root"}},
				Since: start.Add(-time.Hour), Until: until, Limit: 100}})
			if err != nil {
				t.Fatal(err)
			}
			gets := 0
			for _, op := range rec.take() {
				if strings.HasPrefix(op, "get acct#acct_s#cut") {
					gets++
				}
			}
			all, _ := l.Entries(ctx, acct, 0)
			want := 0
			for _, e := range all {
				if e.OccurredAt.Before(until) {
					want++
				}
			}
			if len(got) != want || want != 1+5*2*2 || gets > 16 {
				t.Fatalf("%d entries before %v, want %d; %d cuts read", len(got), until, want, gets)
			}
			for i, e := range got {
				if !e.OccurredAt.Before(until) || i > 0 && e.BalanceAfter != got[i-1].BalanceAfter-got[i-1].Amount {
					t.Fatalf("entry %d %+v", i, e)
				}
			}
		})
	}
}

// A hold a crash left on a sliced account is released by the sweeper,
// on the slice it came from, like any other.
func TestAnOrphanedHoldOnASlicedAccountIsSwept(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			clk := testclock.New(time.Now())
			st := b.Open(t, clk.Now)
			sweptBefore(t, st, clk.Now())
			if err := st.Transact(context.Background(), OpenAccountOps("acct_s", 1_000_000, "test", clk.Now())); err != nil {
				t.Fatal(err)
			}
			l := NewLedger(st, clk.Now)
			ctx := context.Background()
			if err := l.SetSlices(ctx, "acct_s", 4); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Hold(ctx, "acct_s", 300_000, "invoke", 30*time.Second); err != nil {
				t.Fatal(err)
			}
			clk.Advance(30*time.Second + GraceAfterDeadline + time.Second)
			n, err := NewLedger(st, clk.Now).SweepHolds(ctx, GraceAfterDeadline)
			if err != nil || n != 1 {
				t.Fatalf("released %d (%v)", n, err)
			}
			if bal, _ := l.Balance(ctx, "acct_s"); bal != 1_000_000 || slicesNeverNegative(t, l, "acct_s") != bal {
				t.Fatalf("balance %d", bal)
			}
			reconciles(t, listAll(t, l, "acct_s", 2), 1_000_000)
		})
	}
}

// A hold belongs to its call: a retry that runs after the account was
// sliced, in a process that already knows it is, finds the hold its first
// attempt took before the slicing instead of debiting a second one under
// the same id, and the sweep index keeps exactly that one hold.
func TestARetryAfterSlicingReusesItsHoldAndDebitsOnce(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			sweptBefore(t, st, time.Now())
			acct := open(t, st, 1_000_000)
			ctx := context.Background()
			first, err := NewLedger(st, time.Now).HoldOnce(ctx, acct, 10_000, "invoke", "call_retry", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := NewLedger(st, time.Now).SetSlices(ctx, acct, 4); err != nil {
				t.Fatal(err)
			}
			retrying := NewLedger(st, time.Now)
			if err := charge(ctx, retrying, acct, 1); err != nil { // learns the account is sliced
				t.Fatal(err)
			}
			retry, err := retrying.HoldOnce(ctx, acct, 10_000, "invoke", "call_retry", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if retry.ID != first.ID {
				t.Fatalf("the retry holds %s; want its first attempt's %s", retry.ID, first.ID)
			}
			bal, err := retrying.Balance(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(1_000_000 - 1 - 10_000); bal != want {
				t.Fatalf("balance %d after one hold of 10000 and a charge of 1; want %d (the call was held twice)", bal, want)
			}
			if err := retry.Capture(ctx, 10_000); err != nil {
				t.Fatal(err)
			}
			if n, err := NewLedger(st, func() time.Time { return time.Now().Add(time.Hour) }).SweepHolds(ctx, time.Minute); err != nil || n != 0 {
				t.Fatalf("the sweep released %d holds (%v); want none left held", n, err)
			}
			bal, _ = retrying.Balance(ctx, acct)
			reconciles(t, listAll(t, retrying, acct, 5), bal)
			if bal != 1_000_000-1-10_000 {
				t.Fatalf("balance %d after capture", bal)
			}
		})
	}
}
