package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// journal is the embedded recorder's write-ahead log: one JSON line per
// event, appended with one write(2) before the request is answered and
// never fsynced. The kernel holds written bytes in its page cache, so a
// killed process loses none of them; only a machine crash can lose what the
// flusher has not yet committed to the store (see Recorder.MaxCommitLag).
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
}

// journaled is an event as written, with the shard its item goes to (kept,
// so that a replay overwrites the same item) and when it was written.
type journaled struct {
	e       Event
	shard   int
	written time.Time
}

// journalLine is one line of a segment.
type journalLine struct {
	Shard int    `json:"shard"`
	Event stored `json:"event"`
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
	j := &journal{dir: dir}
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
		var l journalLine
		if err := json.Unmarshal(line, &l); err != nil || l.Shard < 0 || l.Shard >= Shards {
			slog.Warn("audit: journal: skipped an undecodable line", "segment", name)
			continue
		}
		e, err := fromStored(l.Event)
		if err != nil {
			slog.Warn("audit: journal: skipped an incomplete event", "segment", name)
			continue
		}
		out = append(out, journaled{e: e, shard: l.Shard})
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
		_ = j.f.Close()
		if j.wrote {
			j.closed = append(j.closed, j.f.Name())
		} else {
			_ = os.Remove(j.f.Name())
		}
	}
	j.f, j.seq, j.wrote = next, j.seq+1, false
	return nil
}

// append writes e's line and keeps e for the flusher; it returns how many
// events now wait for it.
func (j *journal) append(e Event, shard int) (int, error) {
	line, err := json.Marshal(journalLine{Shard: shard, Event: toStored(&e)})
	if err != nil {
		return 0, fmt.Errorf("audit: journal: %w", err)
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if _, err := j.f.Write(line); err != nil {
		// A short write leaves a torn line mid-segment: start a new one,
		// so that only a segment's last line can ever be torn.
		j.err = fmt.Errorf("audit: journal: %w", err)
		if rerr := j.rotate(); rerr == nil {
			j.err = nil
		}
		return 0, fmt.Errorf("audit: journal: %w", err)
	}
	j.wrote = true
	j.pending = append(j.pending, journaled{e: e, shard: shard, written: time.Now()})
	return len(j.pending), nil
}

// take hands the flusher every written event and the closed segments that
// hold them. When the next segment cannot be opened, the current one stays
// open and is not handed over: it is replayed at the next start instead.
func (j *journal) take() ([]journaled, []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	batch := j.pending
	j.pending = nil
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

// close closes the current segment, removing it when it is empty.
func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	_ = j.f.Close()
	if !j.wrote {
		_ = os.Remove(j.f.Name())
	}
	j.f = nil
	j.err = fmt.Errorf("audit: journal: closed")
}
