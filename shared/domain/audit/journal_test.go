package audit_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
)

// segments are the journal's segment files in dir.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestReadersInTheProcessSeeAnEventAsSoonAsItIsRecorded(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	rec := embedded(t, w, t.TempDir())
	rec.StopFlusher()
	recordConcurrently(t, rec, w.traffic(25))
	if n := len(w.all(t, w.window(w.viewer(w.root, "")))); n != 0 {
		t.Fatalf("the store holds %d events before any flush", n)
	}
	w.repo.ReadingAfter(rec.Flush)
	if n := len(w.all(t, w.window(w.viewer(w.root, "")))); n != 25 {
		t.Fatalf("a reader after Flush lists %d events, want 25", n)
	}
	var requests int64
	for _, s := range w.usage(t, audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0.Add(-24 * time.Hour), End: t0.Add(48 * time.Hour), BucketWidth: 24 * time.Hour}) {
		requests += s.requests
	}
	if requests != 25 {
		t.Fatalf("usage counts %d requests, want 25", requests)
	}
}

func TestAJournalLineTornByAKillIsSkippedAndTheRestCounted(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	dir := t.TempDir()
	rec := embedded(t, w, dir)
	release := rec.HoldFlushes()
	recordConcurrently(t, rec, w.traffic(10))
	rec.Kill()
	release()
	rec.Close()
	segs := segments(t, dir)
	if len(segs) != 1 {
		t.Fatalf("the killed recorder left %d segments, want 1", len(segs))
	}
	// The write(2) of an eleventh event, cut short: its request was never
	// answered.
	f, err := os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"shard":1,"event":{"id":"aud_0`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	embedded(t, w, dir).Close()
	if n := len(w.all(t, w.window(w.viewer(w.root, "")))); n != 10 {
		t.Fatalf("listed %d events after the replay, want 10", n)
	}
	if left := segments(t, dir); len(left) != 0 {
		t.Fatalf("the replayed journal keeps %v", left)
	}
}

// A process killed between a line's reservation and its write leaves the
// line's place NULs in the middle of its segment, the lines reserved after
// it written: the next start counts every one of those.
func TestAKilledWritersUnwrittenLineIsSkippedAndTheLinesAfterItCounted(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	dir := t.TempDir()
	rec := embedded(t, w, dir)
	release := rec.HoldFlushes()
	recordConcurrently(t, rec, w.traffic(10))
	rec.Kill()
	release()
	rec.Close()
	segs := segments(t, dir)
	if len(segs) != 1 {
		t.Fatalf("the killed recorder left %d segments, want 1", len(segs))
	}
	raw, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	// The unwritten line reserved fifth, and one torn by the kill.
	lines := bytes.SplitAfterN(raw, []byte("\n"), 6)
	hole := make([]byte, 600)
	torn := append([]byte(`{"shard":1,"event":{"id":"aud_0`), make([]byte, 300)...)
	img := slices.Concat(slices.Concat(lines[:4]...), hole, lines[4], torn, lines[5])
	if err := os.WriteFile(segs[0], img, 0o600); err != nil {
		t.Fatal(err)
	}
	embedded(t, w, dir).Close()
	if n := len(w.all(t, w.window(w.viewer(w.root, "")))); n != 10 {
		t.Fatalf("listed %d events after the replay, want 10", n)
	}
}

func TestACleanCloseCommitsTheJournalAndLeavesNoSegment(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	dir := t.TempDir()
	rec := embedded(t, w, dir)
	rec.StopFlusher()
	recordConcurrently(t, rec, w.traffic(30))
	rec.Close()
	if left := segments(t, dir); len(left) != 0 {
		t.Fatalf("a closed recorder leaves %v", left)
	}
	if n := len(w.all(t, w.window(w.viewer(w.root, "")))); n != 30 {
		t.Fatalf("listed %d events, want 30", n)
	}
	if err := rec.Record(context.Background(), w.traffic(1)[0]); err == nil {
		t.Fatal("a closed recorder accepted an event")
	}
}

// TestAFlushLargerThanATransactionCountsEveryEventOnce: the embedded store
// takes the flusher's whole batch in one commit, beyond the 100 items of a
// transaction, and a second flush counts nothing again.
func TestAFlushLargerThanATransactionCountsEveryEventOnce(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	rec := embedded(t, w, t.TempDir())
	rec.StopFlusher()
	recordConcurrently(t, rec, w.traffic(250))
	for range 2 {
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(w.all(t, w.window(w.viewer(w.root, "")))); n != 250 {
		t.Fatalf("listed %d events, want 250", n)
	}
	var requests int64
	for _, s := range w.usage(t, audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0.Add(-24 * time.Hour), End: t0.Add(48 * time.Hour), BucketWidth: 24 * time.Hour}) {
		requests += s.requests
	}
	if requests != 250 {
		t.Fatalf("usage counts %d requests, want 250", requests)
	}
}

// deadlineSeen is a store that records whether a put came with a deadline.
type deadlineSeen struct {
	store.Store
	put bool
}

func (d *deadlineSeen) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	_, d.put = ctx.Deadline()
	return d.Store.Put(ctx, it, conds...)
}

// Record bounds its own waits on the store, since the kernel calls it with
// no deadline once the answer is known: a recorder that puts each event
// puts it under a deadline.
func TestARecorderBoundsItsOwnWaitOnTheStore(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	st := &deadlineSeen{Store: w.st}
	e := w.event(w.a, "", "", "projects.list", 200, 0, t0)
	if err := audit.NewRecorder(st, w.clock.Now).Record(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if !st.put {
		t.Fatal("the event was put without a deadline")
	}
}
