package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// event, written with one pwrite(2) before the request is answered. The
// kernel holds written bytes in its page cache, so a killed process loses
// none of them. A machine crash loses what is neither fsynced nor committed
// to the store: a syncer fsyncs the journal every syncEvery (one fsync for
// every line written meanwhile, off the request path), which bounds that
// tail whatever the store's pace (see Recorder.LossWindow).
//
// The lock only reserves a line's place in the segment (its offset); the
// write itself runs outside it. A write the kernel holds up (ext4 makes a
// write that grows the file wait for its journal's commit) then delays its
// own request only, not every request queued behind the lock. A
// reservation a killed process never wrote stays a run of NUL bytes, which
// no line contains: replay skips it and reads the lines after it
// (readSegment).
//
// Lines go to numbered segments in dir. Taking a batch for the flusher
// closes the current segment and opens the next, and waits for the lines
// reserved in the closed one, so every line of a closed segment is in that
// batch (or was committed before): once the batch is committed the segment
// is deleted. A segment left by a killed process is replayed at the next
// start, and replaying one already committed counts nothing twice (the
// commit is idempotent by event id).
type journal struct {
	dir string

	mu      sync.Mutex
	cur     *segment
	seq     int
	pending []journaled // written, not yet committed
	closed  []*segment  // segments whose lines are all in pending or committed, once written
	err     error       // the journal is closed and refuses events
	// retired are rotated segments the syncer has not fsynced yet; it
	// closes them after. dirtySince is the first write not yet fsynced.
	retired    []*segment
	dirtySince time.Time

	timings *Timings
}

// segment is one journal file and the lines reserved in it.
type segment struct {
	name string
	f    *os.File
	// w writes the lines: f, or in tests a writer that holds one back
	// between its reservation and its write.
	w io.WriterAt
	// end is the next line's offset (under the journal's lock).
	end int64
	// writing counts the lines reserved and not yet written: a segment is
	// handed to the flusher, or fsynced as retired, only once it is zero.
	writing sync.WaitGroup
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
	next, err := j.create(j.seq + 1)
	if err != nil {
		return nil, nil, nil, err
	}
	j.rotate(next)
	return j, left, names, nil
}

// readSegment decodes a segment's lines. A line is complete once its '\n'
// is written; no line holds a NUL byte (JSON escapes it). A process killed
// with lines reserved and unwritten (their requests never answered) leaves
// each of them a run of NULs, after a torn start when the kill came inside
// its write, with other lines before and after; and a machine crash can
// leave a file whose size was written before its last bytes, which then
// read as NULs. So a line is what follows the last NUL before its '\n',
// and what precedes that NUL, or has no '\n', is skipped. So is a line
// that does not decode.
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
		if i := bytes.LastIndexByte(line, 0); i >= 0 {
			if bytes.IndexFunc(line[:i], func(r rune) bool { return r != 0 }) >= 0 {
				slog.Warn("audit: journal: skipped a line torn by a kill", "segment", name)
			}
			line = line[i+1:]
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

// create makes segment n, empty.
func (j *journal) create(n int) (*segment, error) {
	f, err := os.OpenFile(j.segment(n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	return &segment{name: f.Name(), f: f, w: f}, nil
}

// rotate makes next (segment seq+1) the current segment, the current one
// closed and retired when it holds lines, else removed. Callers hold mu,
// or own j alone.
func (j *journal) rotate(next *segment) {
	if old := j.cur; old != nil {
		if old.end > 0 {
			j.closed = append(j.closed, old)
			j.retired = append(j.retired, old)
		} else {
			_ = old.f.Close()
			_ = os.Remove(old.name)
		}
	}
	j.cur, j.seq = next, j.seq+1
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
	t1 := time.Now()
	j.timings.AppendWait.Record(t1.Sub(t0))
	if j.err != nil {
		j.mu.Unlock()
		return 0, j.err
	}
	s := j.cur
	at := s.end
	s.end += int64(len(line))
	s.writing.Add(1)
	j.mu.Unlock()
	t2 := time.Now()
	_, err := s.w.WriteAt(line, at)
	j.timings.AppendWrite.Since(t2)
	if err != nil {
		// The reservation stays unwritten, or torn: replay skips it.
		s.writing.Done()
		return 0, fmt.Errorf("audit: journal: %w", err)
	}
	j.mu.Lock()
	if j.dirtySince.IsZero() {
		j.dirtySince = time.Now()
	}
	j.pending = append(j.pending, journaled{e: e, shard: shard, doc: doc})
	waiting := len(j.pending)
	j.mu.Unlock()
	s.writing.Done()
	return waiting, nil
}

// sync fsyncs every line written so far and returns how long the oldest of
// them waited for it (zero when nothing was waiting). Rotated segments are
// closed once their lines are written and synced. The lock is not held
// during the fsync: writers go on.
func (j *journal) sync() (time.Duration, error) {
	j.mu.Lock()
	since := j.dirtySince
	if since.IsZero() {
		j.mu.Unlock()
		return 0, nil
	}
	j.dirtySince = time.Time{}
	segs := j.retired
	j.retired = nil
	cur := j.cur
	j.mu.Unlock()
	var first error
	t0 := time.Now()
	defer j.timings.Sync.Since(t0)
	for _, s := range segs {
		s.writing.Wait()
		if err := s.f.Sync(); err != nil && first == nil {
			first = err
		}
		_ = s.f.Close()
	}
	if cur != nil {
		// Closed meanwhile (by close, which syncs itself): nothing lost.
		if err := cur.f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) && first == nil {
			first = err
		}
	}
	return time.Since(since), first
}

// take hands the flusher every written event and the closed segments that
// hold them. The next segment is made before the lock is taken, so that
// requests do not wait on the file system's creating it; when it cannot
// be made, the current one stays open and is not handed over: it is
// replayed at the next start instead. One flusher calls take at a time
// (Recorder.flushMu), so seq only changes here.
func (j *journal) take() ([]journaled, []string) {
	j.mu.Lock()
	rotate := j.cur != nil && j.cur.end > 0
	seq := j.seq
	j.mu.Unlock()
	if rotate {
		next, err := j.create(seq + 1)
		if err != nil {
			slog.Warn("audit: journal: rotation failed", "err", err)
		} else {
			j.mu.Lock()
			if j.err != nil {
				// Closed meanwhile: the next segment is not needed.
				j.mu.Unlock()
				_ = next.f.Close()
				_ = os.Remove(next.name)
			} else {
				j.rotate(next)
				j.mu.Unlock()
			}
		}
	}
	j.mu.Lock()
	segs := j.closed
	j.closed = nil
	j.mu.Unlock()
	// Lines reserved in a closed segment before its rotation are in
	// pending once written.
	for _, s := range segs {
		s.writing.Wait()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	batch := j.pending
	// The next batch is about this one's size: made at once, the list is
	// not regrown and copied a dozen times on the request path.
	j.pending = make([]journaled, 0, len(batch))
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = s.name
	}
	return batch, names
}

// giveBack returns a batch whose commit failed, for the next flush. Its
// segments are written: nothing is left to wait for.
func (j *journal) giveBack(batch []journaled, segs []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pending = append(batch, j.pending...)
	back := make([]*segment, len(segs))
	for i, name := range segs {
		back[i] = &segment{name: name}
	}
	j.closed = append(back, j.closed...)
}

// remove deletes committed segments.
func (j *journal) remove(segs []string) {
	for _, s := range segs {
		if err := os.Remove(s); err != nil && !os.IsNotExist(err) {
			slog.Warn("audit: journal: a committed segment stays; its replay will count nothing twice", "err", err)
		}
	}
}

// close syncs and closes the segments, removing the current one when it
// holds no line. It refuses events from then on, and waits for the lines
// already reserved outside the lock, which need it to finish.
func (j *journal) close() {
	j.mu.Lock()
	j.err = fmt.Errorf("audit: journal: closed")
	segs := append(j.retired, j.cur)
	j.retired, j.cur = nil, nil
	j.mu.Unlock()
	for _, s := range segs {
		if s == nil {
			continue
		}
		s.writing.Wait()
		_ = s.f.Sync()
		_ = s.f.Close()
		if s.end == 0 {
			_ = os.Remove(s.name)
		}
	}
}
