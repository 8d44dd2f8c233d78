package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// journalEvent is the i-th of a test's events, stamped as Record stamps
// it: its request id names it.
func journalEvent(i int) Event {
	e := Event{
		OccurredAt: time.Date(2026, 3, 10, 20, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
		RequestID:  fmt.Sprintf("req_%06d", i), AccountID: "acct_journal", KeyPath: []string{"key_root", "key_leaf"},
		Operation: "projects.list", Method: "GET", Path: "/v1/projects", Status: 200,
	}
	stamp(&e)
	return e
}

func requestIDsOf(batch []journaled) []string {
	out := make([]string, len(batch))
	for i := range batch {
		out[i] = batch[i].e.RequestID
	}
	return out
}

// checkLines fails unless every byte of the segment up to its last '\n'
// is whole lines, none torn, none interleaved with another, and nothing
// but NULs follows.
func checkLines(t *testing.T, name string) {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(raw, '\n')
	if tail := raw[last+1:]; bytes.ContainsFunc(tail, func(r rune) bool { return r != 0 }) {
		t.Fatalf("%s ends in %q after its last line", filepath.Base(name), tail)
	}
	for line := range bytes.SplitSeq(raw[:last+1], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var l rawLine
		var s stored
		if bytes.IndexByte(line, 0) >= 0 || json.Unmarshal(line, &l) != nil || json.Unmarshal(l.Event, &s) != nil {
			t.Fatalf("%s holds a torn or interleaved line %q", filepath.Base(name), line)
		}
	}
}

// Many goroutines append while the flusher takes batch after batch: every
// line is whole in its segment, and every appended event is in exactly one
// batch, the one that hands over its segment or an earlier one, so that
// deleting a committed segment loses no line whose request was answered.
func TestConcurrentAppendsAreWholeLinesEachInTheBatchThatHandsOverItsSegment(t *testing.T) {
	dir := t.TempDir()
	j, left, _, err := openJournal(dir)
	if err != nil || len(left) != 0 {
		t.Fatalf("open: %v, %d left", err, len(left))
	}
	const writers, each = 16, 300
	var appenders sync.WaitGroup
	for w := range writers {
		appenders.Go(func() {
			for i := range each {
				if _, err := j.append(journalEvent(w*each+i), i%Shards); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { appenders.Wait(); close(done) }()
	batched := map[string]int{}
	takeAndCheck := func() {
		batch, segs := j.take()
		for _, id := range requestIDsOf(batch) {
			batched[id]++
		}
		for _, name := range segs {
			checkLines(t, name)
			lines, err := readSegment(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range requestIDsOf(lines) {
				if batched[id] == 0 {
					t.Fatalf("segment %s was handed over without its event %s", filepath.Base(name), id)
				}
			}
		}
		j.remove(segs)
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			takeAndCheck()
		}
	}
	takeAndCheck()
	for i := range writers * each {
		if id := journalEvent(i).RequestID; batched[id] != 1 {
			t.Fatalf("event %s is in %d batches, want 1", id, batched[id])
		}
	}
	if len(batched) != writers*each {
		t.Fatalf("%d events batched, want %d", len(batched), writers*each)
	}
	j.close()
	if left := segmentNames(t, dir); len(left) != 0 {
		t.Fatalf("a closed journal with every batch taken keeps %v", left)
	}
}

func segmentNames(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A kill can come while any lines are reserved and unwritten: each is then
// NULs, after the part of it written before the kill, with completed lines
// before and after it, and the segment ends at its last written byte, or
// in NULs where a machine crash left its size ahead of its data. Replay reads every completed line and makes up none.
func TestReplayAfterAKillAnywhereReadsEveryCompletedLineAndInventsNone(t *testing.T) {
	dir := t.TempDir()
	j, _, _, err := openJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	for i := range n {
		if _, err := j.append(journalEvent(i), i%Shards); err != nil {
			t.Fatal(err)
		}
	}
	name := j.cur.name
	j.close()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
	var lines [][]byte
	for line := range bytes.SplitAfterSeq(raw, []byte("\n")) {
		if len(line) > 0 {
			lines = append(lines, line)
		}
	}
	if len(lines) != n {
		t.Fatalf("%d lines written, want %d", len(lines), n)
	}
	// written[i] is how much of line i was written when the kill came.
	check := func(t *testing.T, written []int, pad int) {
		t.Helper()
		var img []byte
		var want []string
		size := 0
		for i, line := range lines {
			img = append(img, line[:written[i]]...)
			img = append(img, make([]byte, len(line)-written[i])...)
			if written[i] > 0 {
				size = len(img) - (len(line) - written[i])
			}
			if written[i] == len(line) {
				want = append(want, journalEvent(i).RequestID)
			}
		}
		img = append(img[:size], make([]byte, pad)...)
		seg := filepath.Join(t.TempDir(), "0000000000000001.log")
		if err := os.WriteFile(seg, img, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readSegment(seg)
		if err != nil {
			t.Fatal(err)
		}
		if ids := requestIDsOf(got); !slices.Equal(ids, want) {
			t.Fatalf("written %v, padded %d: replay read %v, want %v", written, pad, ids, want)
		}
	}
	whole := func() []int {
		w := make([]int, n)
		for i, line := range lines {
			w[i] = len(line)
		}
		return w
	}
	for _, pad := range []int{0, 4096} {
		t.Run(fmt.Sprintf("padded %d", pad), func(t *testing.T) {
			check(t, whole(), pad)
			for i, line := range lines {
				for _, cut := range []int{0, 1, len(line) / 2, len(line) - 2, len(line) - 1} {
					w := whole()
					w[i] = cut
					check(t, w, pad)
				}
			}
			rnd := rand.New(rand.NewPCG(7, uint64(pad)))
			for range 300 {
				w := whole()
				for i := range w {
					if rnd.IntN(3) == 0 {
						w[i] = rnd.IntN(len(lines[i]))
					}
				}
				check(t, w, pad)
			}
		})
	}
}

// heldWrite holds the first line written through it until released.
type heldWrite struct {
	io.WriterAt
	once              sync.Once
	entered, released chan struct{}
}

func (h *heldWrite) WriteAt(p []byte, off int64) (int, error) {
	h.once.Do(func() {
		close(h.entered)
		<-h.released
	})
	return h.WriterAt.WriteAt(p, off)
}

// A line reserved before its segment's rotation and written after it is
// in the batch that hands the segment over: the flusher waits for it, or
// deleting the committed segment would lose an answered request's event.
func TestTheBatchThatHandsOverASegmentWaitsForTheLinesReservedInIt(t *testing.T) {
	j, _, _, err := openJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	held := &heldWrite{WriterAt: j.cur.w, entered: make(chan struct{}), released: make(chan struct{})}
	j.cur.w = held
	appended := make(chan error, 1)
	go func() {
		_, err := j.append(journalEvent(1), 0)
		appended <- err
	}()
	<-held.entered
	type taken struct {
		batch []journaled
		segs  []string
	}
	took := make(chan taken, 1)
	go func() {
		batch, segs := j.take()
		took <- taken{batch, segs}
	}()
	// A take that does not wait returns meanwhile, without the line.
	select {
	case <-took:
		close(held.released)
		t.Fatal("the segment was handed over while a line reserved in it was unwritten")
	case <-time.After(100 * time.Millisecond):
	}
	close(held.released)
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	got := <-took
	if len(got.segs) != 1 || !slices.Equal(requestIDsOf(got.batch), []string{journalEvent(1).RequestID}) {
		t.Fatalf("took %v with segments %v, want the held line with its segment", requestIDsOf(got.batch), got.segs)
	}
}
