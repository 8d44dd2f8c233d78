package audit_test

import (
	"compress/flate"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/diskuse"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/fastdeflate"
)

// Events recorded out of order (late ones below blocks already committed),
// in flushes of every size, with settlements committed as items of their
// own among them, page back newest first, each exactly once, however small
// the page, and a replayed journal adds none twice.
func TestEventsInBlocksPageBackInOrderEachOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		dir := t.TempDir()
		rec := embedded(t, w, dir)
		rec.StopFlusher()
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 2))
		var want []string
		occurred := map[string]time.Time{}
		// On the emulator, which serves one request at a time, fewer
		// events and no one-event pages: pages of 7 still end inside
		// blocks.
		n, limits := 3*audit.BlockEvents+40, []int{1, 7, 100}
		if testing.Short() || be.Name != "embedded" {
			n, limits = 300, []int{7, 100}
		}
		for i := range n {
			// Mostly rising times, a tenth of them late by up to a minute.
			at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
			if rng.IntN(10) == 0 {
				at = at.Add(-time.Duration(rng.IntN(60_000)) * time.Millisecond)
			}
			e := w.event(w.root, "", "", "projects.list", 200, 0, at)
			if i%50 == 7 {
				e.Operation = "credits.holds.settle"
				if err := w.st.Transact(ctx, audit.SettlementOps(&e)); err != nil {
					t.Fatal(err)
				}
				want = append(want, e.RequestID)
				occurred[e.RequestID] = e.OccurredAt
				continue
			}
			if err := rec.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
			want = append(want, e.RequestID)
			occurred[e.RequestID] = e.OccurredAt
			if rng.IntN(40) == 0 {
				if err := rec.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for _, limit := range limits {
			f := w.window(w.viewer(w.root, ""))
			f.Limit = limit
			got := w.all(t, f)
			var ids []string
			for i, e := range got {
				ids = append(ids, e.RequestID)
				if i > 0 && got[i-1].ID <= e.ID {
					t.Fatalf("limit %d: event %d (%s) not below the one before (%s)", limit, i, e.ID, got[i-1].ID)
				}
			}
			slices.Sort(ids)
			sorted := slices.Sorted(slices.Values(want))
			if !slices.Equal(ids, sorted) {
				t.Fatalf("limit %d: %d events listed, want the %d recorded, each once", limit, len(ids), len(sorted))
			}
		}
		// A range that ends inside blocks lists exactly the events before
		// its end.
		f := w.window(w.viewer(w.root, ""))
		f.Until, f.Limit = t0.Add(time.Duration(n)*50*time.Millisecond+7*time.Millisecond), 9
		before := 0
		for _, o := range occurred {
			if o.Before(f.Until) {
				before++
			}
		}
		if got := w.all(t, f); len(got) != before {
			t.Errorf("until %s: %d events listed, want the %d before it", f.Until, len(got), before)
		}
	})
}

// Embedded, a stored audited request takes at most 150 bytes on disk: the
// store's file grows by no more than that per event, counted in allocated
// blocks as du counts them, after the events are committed.
func TestAnEmbeddedEventTakesAtMost150BytesOnDisk(t *testing.T) {
	const events = 20_000
	const bound = 150
	dir := t.TempDir()
	path := filepath.Join(dir, "platform.db")
	w := keyTree()
	st, err := boltstore.Open(path, boltstore.WithClock(w.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	w.st = st
	rec, err := audit.NewEmbeddedRecorder(st, w.clock.Now, filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	rec.StopFlusher()
	ctx := context.Background()
	before, err := diskuse.Allocated(path)
	if err != nil {
		t.Fatal(err)
	}
	// A busy key's reads, as the bench sends them: 2,000 a second, flushed
	// every 200 ms as the flusher does.
	for i := range events {
		at := t0.Add(time.Duration(i) * 500 * time.Microsecond)
		e := w.event(w.a1, "", "", "credits.balance.get", 200, 0, at)
		e.Method, e.Path = "GET", "/v1/credits/balance"
		if err := rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		if i%400 == 399 {
			if err := rec.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	rec.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := diskuse.Allocated(path)
	if err != nil {
		t.Fatal(err)
	}
	per := float64(after-before) / events
	t.Logf("%d events: %d → %d bytes, %.1f bytes an event", events, before, after, per)
	if per > bound {
		t.Errorf("%.1f bytes on disk an event, want at most %d", per, bound)
	}
	// And they are all there.
	st, err = boltstore.Open(path, boltstore.WithClock(w.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w.st, w.repo = st, audit.NewRepo(st, w.clock.Now)
	f := w.window(w.viewer(w.root, ""))
	if got := len(w.all(t, f)); got != events {
		t.Errorf("%d events listed, want %d", got, events)
	}
}

// A block lives as long as its newest event; its older events are not
// listed once their own retention has passed, as items of their own would
// not be.
func TestABlocksEventsAreNotListedPastTheirRetention(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	start := time.Date(t0.Year(), t0.Month(), t0.Day(), 0, 30, 0, 0, time.UTC)
	w.clock.Set(start.Add(23 * time.Hour))
	rec := embedded(t, w, t.TempDir())
	rec.StopFlusher()
	ctx := context.Background()
	for i := range 64 {
		e := w.event(w.root, "", "", "projects.list", 200, 0, start.Add(time.Duration(i)*20*time.Minute))
		if err := rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	now := start.Add(audit.Retention + 10*time.Hour)
	w.clock.Set(now)
	f := audit.Filter{Viewer: w.viewer(w.root, ""), Since: start.Add(-time.Hour), Until: start.Add(23 * time.Hour), Limit: 100}
	got := w.all(t, f)
	for _, e := range got {
		if !e.OccurredAt.Add(audit.Retention).After(now) {
			t.Errorf("event of %s listed at %s, past its retention", e.OccurredAt, now)
		}
	}
	if want := 64 - 31; len(got) != want {
		t.Errorf("%d events listed, want the %d within their retention", len(got), want)
	}
}

// A deflater that cannot be made at the blocks' level fails the recorder's
// opening, before its journal is touched, rather than the flushes after it.
func TestADeflaterThatCannotBeMadeFailsTheRecordersOpening(t *testing.T) {
	w := keyTree()
	w.st = teststores.Embedded.Open(t, w.clock.Now)
	refusing := func(level int) (audit.Deflater, error) { return nil, fmt.Errorf("no deflater at level %d", level) }
	dir := filepath.Join(t.TempDir(), "journal")
	rec, err := audit.NewEmbeddedRecorder(w.st, w.clock.Now, dir, audit.WithDeflater(refusing))
	if err == nil {
		rec.Close()
		t.Fatal("a recorder opened with a deflater that cannot be made")
	}
	if !strings.Contains(err.Error(), "no deflater at level") {
		t.Errorf("error %q does not say why", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused recorder made its journal: %v", err)
	}
}

// Blocks a recorder's injected deflater wrote are read back as the standard
// deflater's are, and a recorder with the standard deflater adds to them:
// the fast deflater the local process injects writes the same format. The
// recorder makes its deflaters with the injected function, at the blocks'
// level. Embedded only: on AWS events are items of their own, no blocks.
func TestBlocksTheInjectedDeflaterWroteListBackAndGrowWithTheStandardOne(t *testing.T) {
	w := keyTree()
	w.st = teststores.Embedded.Open(t, w.clock.Now)
	w.repo = audit.NewRepo(w.st, w.clock.Now)
	ctx := context.Background()
	var made []int
	fast := func(level int) (audit.Deflater, error) {
		made = append(made, level)
		return fastdeflate.New(level)
	}
	var want []string
	record := func(rec *audit.Recorder, from, n int) {
		for i := from; i < from+n; i++ {
			e := w.event(w.root, "", "", "projects.list", 200, 0, t0.Add(time.Duration(i)*time.Second))
			if err := rec.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
			want = append(want, e.RequestID)
		}
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	rec, err := audit.NewEmbeddedRecorder(w.st, w.clock.Now, dir, audit.WithDeflater(fast))
	if err != nil {
		t.Fatal(err)
	}
	record(rec, 0, 2*audit.BlockEvents+10)
	rec.Close()
	if len(made) == 0 || made[0] != flate.BestSpeed {
		t.Fatalf("deflaters made at levels %v, want the injected function's at %d", made, flate.BestSpeed)
	}
	// The standard deflater fills the last block the fast one wrote.
	record(embedded(t, w, dir), 2*audit.BlockEvents+10, 20)
	f := w.window(w.viewer(w.root, ""))
	f.Limit = 7
	got := requestIDs(w.all(t, f))
	if len(got) != len(want) {
		t.Fatalf("%d events listed, want the %d recorded", len(got), len(want))
	}
	for _, id := range want {
		if !got[id] {
			t.Fatalf("event %s not listed", id)
		}
	}
}
