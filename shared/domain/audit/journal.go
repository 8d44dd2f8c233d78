package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/store"
)

// journal is the embedded recorder's write-ahead log: one JSON line per
// event, appended with one write(2) before the request is answered. The
// kernel holds written bytes in its page cache, so a killed process loses
// none of them. A machine crash loses what is neither fsynced nor committed
// to the store: a syncer fsyncs the journal every syncEvery (one fsync for
// every line written meanwhile, off the request path), which bounds that
// tail whatever the store's pace (see Recorder.LossWindow).
//
// Lines go to numbered segments in dir. Taking a batch for the flusher
// closes the current segment and opens the next, so every line of a closed
// segment is in that batch (or was committed before): once the batch is
// committed the segment is deleted. A segment left by a killed process is
// replayed at the next start, and replaying one already committed counts
// nothing twice (the commit is idempotent by event id).
type journal struct {
	dir string

	mu      sync.Mutex
	f       *os.File
	seq     int
	wrote   bool        // f holds at least one line
	pending []journaled // written, not yet committed
	closed  []string    // segments whose lines are all in pending or committed
	err     error       // a failed write or rotation: the journal refuses events
	// retired are rotated segments the syncer has not fsynced yet; it
	// closes them after. dirtySince is the first write not yet fsynced.
	retired    []*os.File
	dirtySince time.Time

	timings *Timings
}

// journaled is an event as written, with the shard its item goes to (kept,
// so that a replay writes the same item) and its stored document.
type journaled struct {
	e     Event
	shard int
	doc   []byte
}

// item is the event's item, its document as journaled.
func (j *journaled) item() store.Item {
	var p partitions
	return p.item(j)
}

// partitions makes the items of a batch of events, naming each partition
// (account, day, shard) once and boxing each second's expiry once: the
// flusher's thousands of events a commit fall into a few dozen partitions
// and share their seconds, and the names and boxes were over a quarter of
// its allocations. The zero value is ready.
type partitions struct {
	pks     map[partitionOf]any // a partition key, boxed once
	at      int64               // the second whose expiry is boxed
	expires any
}

type partitionOf struct {
	account string
	day     int64 // days since 1970, UTC
	shard   int
}

func (p *partitions) item(j *journaled) store.Item {
	sec := j.e.OccurredAt.Unix()
	pk := p.pk(j)
	if p.expires == nil || p.at != sec {
		p.at, p.expires = sec, expiry(j.e.OccurredAt)
	}
	return store.Item{store.AttrPK: pk, store.AttrSK: j.e.ID, store.AttrDoc: j.doc, store.AttrExpiresAt: p.expires}
}

// pk is the partition key of j's item.
func (p *partitions) pk(j *journaled) any {
	of := partitionOf{account: j.e.AccountID, day: j.e.OccurredAt.Unix() / 86400, shard: j.shard}
	pk, ok := p.pks[of]
	if !ok {
		if p.pks == nil {
			p.pks = map[partitionOf]any{}
		}
		pk = eventPK(j.e.AccountID, dayOf(j.e.OccurredAt), j.shard)
		p.pks[of] = pk
	}
	return pk
}

// rawLine reads a line keeping the event's document as written.
type rawLine struct {
	Shard int             `json:"shard"`
	Event json.RawMessage `json:"event"`
}

const segmentExt = ".log"

// openJournal opens dir and returns the events that segments of a previous
// process hold, with those segments: the caller commits the events, then
// deletes the segments (journal.remove).
func openJournal(dir string) (*journal, []journaled, []string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("audit: journal: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("audit: journal: %w", err)
	}
	slices.Sort(names)
	j := &journal{dir: dir, timings: new(Timings)}
	var left []journaled
	for _, name := range names {
		n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(name), segmentExt))
		if err != nil {
			continue
		}
		j.seq = max(j.seq, n)
		evs, err := readSegment(name)
		if err != nil {
			return nil, nil, nil, err
		}
		left = append(left, evs...)
	}
	if err := j.rotate(); err != nil {
		return nil, nil, nil, err
	}
	return j, left, names, nil
}

// readSegment decodes a segment's lines. Only its last line can be torn (a
// process killed inside its write(2), whose request was never answered):
// it is skipped, as is any line that does not decode.
func readSegment(name string) ([]journaled, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	var out []journaled
	for len(raw) > 0 {
		line, rest, complete := bytes.Cut(raw, []byte("\n"))
		raw = rest
		if !complete {
			break
		}
		var l rawLine
		var s stored
		if err := json.Unmarshal(line, &l); err != nil || l.Shard < 0 || l.Shard >= Shards || json.Unmarshal(l.Event, &s) != nil {
			slog.Warn("audit: journal: skipped an undecodable line", "segment", name)
			continue
		}
		e, err := fromStored(s)
		if err != nil {
			slog.Warn("audit: journal: skipped an incomplete event", "segment", name)
			continue
		}
		out = append(out, journaled{e: e, shard: l.Shard, doc: l.Event})
	}
	return out, nil
}

func (j *journal) segment(n int) string {
	return filepath.Join(j.dir, fmt.Sprintf("%016d%s", n, segmentExt))
}

// rotate closes the current segment (remembering it when it holds lines)
// and opens the next. Callers hold mu, or own j alone.
func (j *journal) rotate() error {
	next, err := os.OpenFile(j.segment(j.seq+1), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	if j.f != nil {
		if j.wrote {
			j.closed = append(j.closed, j.f.Name())
			j.retired = append(j.retired, j.f)
		} else {
			_ = j.f.Close()
			_ = os.Remove(j.f.Name())
		}
	}
	j.f, j.seq, j.wrote = next, j.seq+1, false
	return nil
}

// append writes e's line and keeps e for the flusher; it returns how many
// events now wait for it.
func (j *journal) append(e Event, shard int) (int, error) {
	// One buffer holds the line; the document the flusher stores is a
	// view of it.
	line := make([]byte, 0, 640)
	line = append(line, `{"shard":`...)
	line = strconv.AppendInt(line, int64(shard), 10)
	line = append(line, `,"event":`...)
	start := len(line)
	line = appendStored(line, &e)
	doc := line[start:len(line):len(line)]
	line = append(line, "}\n"...)
	t0 := time.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	t1 := time.Now()
	j.timings.AppendWait.Record(t1.Sub(t0))
	if j.err != nil {
		return 0, j.err
	}
	_, err := j.f.Write(line)
	j.timings.AppendWrite.Since(t1)
	if err != nil {
		// A short write leaves a torn line mid-segment: start a new one,
		// so that only a segment's last line can ever be torn.
		j.err = fmt.Errorf("audit: journal: %w", err)
		if rerr := j.rotate(); rerr == nil {
			j.err = nil
		}
		return 0, fmt.Errorf("audit: journal: %w", err)
	}
	if j.dirtySince.IsZero() {
		j.dirtySince = time.Now()
	}
	j.wrote = true
	j.pending = append(j.pending, journaled{e: e, shard: shard, doc: doc})
	return len(j.pending), nil
}

// sync fsyncs every line written so far and returns how long the oldest of
// them waited for it (zero when nothing was waiting). Rotated segments are
// closed once synced. The lock is not held during the fsync: writers go on.
func (j *journal) sync() (time.Duration, error) {
	j.mu.Lock()
	since := j.dirtySince
	if since.IsZero() {
		j.mu.Unlock()
		return 0, nil
	}
	j.dirtySince = time.Time{}
	files := j.retired
	j.retired = nil
	cur := j.f
	j.mu.Unlock()
	var first error
	t0 := time.Now()
	defer j.timings.Sync.Since(t0)
	for _, f := range files {
		if err := f.Sync(); err != nil && first == nil {
			first = err
		}
		_ = f.Close()
	}
	if cur != nil {
		// Closed meanwhile (by close, which syncs itself): nothing lost.
		if err := cur.Sync(); err != nil && !errors.Is(err, os.ErrClosed) && first == nil {
			first = err
		}
	}
	return time.Since(since), first
}

// take hands the flusher every written event and the closed segments that
// hold them. When the next segment cannot be opened, the current one stays
// open and is not handed over: it is replayed at the next start instead.
func (j *journal) take() ([]journaled, []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	batch := j.pending
	// The next batch is about this one's size: made at once, the list is
	// not regrown and copied a dozen times on the request path.
	j.pending = make([]journaled, 0, len(batch))
	if j.wrote {
		if err := j.rotate(); err != nil {
			slog.Warn("audit: journal: rotation failed", "err", err)
		}
	}
	segs := j.closed
	j.closed = nil
	return batch, segs
}

// giveBack returns a batch whose commit failed, for the next flush.
func (j *journal) giveBack(batch []journaled, segs []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pending = append(batch, j.pending...)
	j.closed = append(segs, j.closed...)
}

// remove deletes committed segments.
func (j *journal) remove(segs []string) {
	for _, s := range segs {
		if err := os.Remove(s); err != nil && !os.IsNotExist(err) {
			slog.Warn("audit: journal: a committed segment stays; its replay will count nothing twice", "err", err)
		}
	}
}

// close syncs and closes the segments, removing the current one when it is
// empty.
func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, f := range j.retired {
		_ = f.Sync()
		_ = f.Close()
	}
	j.retired = nil
	if j.f == nil {
		return
	}
	_ = j.f.Sync()
	_ = j.f.Close()
	if !j.wrote {
		_ = os.Remove(j.f.Name())
	}
	j.f = nil
	j.err = fmt.Errorf("audit: journal: closed")
}
