package audit

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"platformapi/shared/adapters/store"
)

// Embedded (a store that commits any number of writes at once: boltstore),
// a partition's events are kept in blocks rather than one item each: an
// item under the partition's key whose sort key is the greatest event id it
// holds, with the events' stored documents, one a line, deflated. One item
// per event cost about 0.8 KB on disk (its key twice, bbolt's element
// header, the JSON document and half-empty pages); a block of a partition's
// events shares the key and the page, and the documents, which repeat
// their field names and most values, compress about tenfold
// (docs/benchmarks.md).
//
// The blocks of a partition never overlap: an event goes to the first block
// whose greatest id is not below its own, else after the last block (which
// is rewritten to take it while it holds fewer than blockEvents). So a
// reader that expands blocks as it meets them, newest first, sees every
// event in id order, and the one block a cursor can fall inside is the
// first block at or above it. Settlement events, committed inside other
// transactions, stay items of their own among the blocks; readers merge
// them in. A block expires with its newest event; readers drop its older
// events once their own retention has passed.
//
// On DynamoDB events stay one item each: a block would be rewritten as it
// grows (a write unit per KB of the whole block each time) and concentrate
// a partition's writes, where one event is one write unit.
const (
	attrBlock  = "blk" // the deflated documents
	attrEvents = "n"   // how many events the block holds
)

// blockEvents is how many events a block holds before the next event of its
// partition starts another: enough to share its key and compress well,
// few enough that rewriting the last block with a flush's new events stays
// cheap.
const blockEvents = 64

// oneCommitter is a store that commits any number of transactions, each of
// any size, in one commit (boltstore.Store.InOneCommit): the flusher's
// batch, however large, then costs one fsync instead of one per
// store.MaxTransactItems items. It is also where events are kept in blocks.
type oneCommitter interface {
	InOneCommit(ctx context.Context, fn func(transact func(ops []store.Op) error) error) error
}

// inBlocks reports whether events on st are kept in blocks.
func inBlocks(st store.Store) bool {
	_, ok := st.(oneCommitter)
	return ok
}

// isBlock reports whether an item of an event partition is a block.
func isBlock(it store.Item) bool { return it.Has(attrBlock) }

// block is a block as read or being made: its events in id order with
// their documents, and the key it was stored under ("" for a new one).
type block struct {
	stored string // the sort key it is stored under now
	docs   []blockDoc
}

type blockDoc struct {
	id  string
	doc []byte
}

func (b *block) max() string { return b.docs[len(b.docs)-1].id }

// has reports whether the block holds the event id.
func (b *block) has(id string) bool {
	_, found := slices.BinarySearchFunc(b.docs, id, func(d blockDoc, id string) int { return strings.Compare(d.id, id) })
	return found
}

func (b *block) add(d blockDoc) {
	i, _ := slices.BinarySearchFunc(b.docs, d.id, func(x blockDoc, id string) int { return strings.Compare(x.id, id) })
	b.docs = slices.Insert(b.docs, i, d)
}

// deflate is the block's documents, one a line, compressed. The documents
// go to the deflater as they are (it gathers its input in its own window,
// so the output is the same bytes) rather than copied into one buffer
// first, and the output is sized once, for the tenfold compression blocks
// get. BenchmarkBlockDeflate (64 events), 2026-11-29, 6 alternating runs
// of each at load average 17-20: median 268 -> 175 us a block (lower in 5
// of 6 pairs), 55 KB -> 3.9 KB and 12 -> 2 allocations.
func (b *block) deflate(writers *sync.Pool) ([]byte, error) {
	n := 0
	for _, d := range b.docs {
		n += len(d.doc) + 1
	}
	out := bytes.NewBuffer(make([]byte, 0, n/8+64))
	w := writers.Get().(Deflater)
	defer writers.Put(w)
	w.Reset(out)
	for _, d := range b.docs {
		if _, err := w.Write(d.doc); err != nil {
			return nil, err
		}
		if _, err := w.Write(newline); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

var newline = []byte("\n")

// inflated keeps the blocks read last: a page that starts at a cursor reads
// again the blocks the page before ended in, and the flusher the last block
// of each partition it adds to. A block's content is named by its key and
// its count, since a block only ever gains events; callers never change a
// block they get from it (commitBlocks copies it first).
var inflated = struct {
	sync.Mutex
	m map[string]*block
}{m: map[string]*block{}}

// inflatedBlocks bounds the cache: blockEvents documents of about 0.6 KB
// each, a few MB in all.
const inflatedBlocks = 128

// Deflater compresses a block's documents in deflate's format, which
// inflate reads back with compress/flate: compress/flate's *Writer, unless
// the process injects another (WithDeflater).
type Deflater interface {
	io.WriteCloser
	Reset(io.Writer)
}

// NewDeflater makes a Deflater at a compress/flate level.
type NewDeflater func(level int) (Deflater, error)

// standardDeflater is compress/flate's.
func standardDeflater(level int) (Deflater, error) { return flate.NewWriter(nil, level) }

// deflaters keeps a NewDeflater's deflaters to reuse: each holds about
// 600 KB of state, whose making was most of a flush's time. The first is
// made at once, so a NewDeflater that refuses blockLevel fails where it is
// given; one that made a deflater at that level once and then cannot is
// broken, and the pool panics.
func deflaters(newDeflater NewDeflater) (*sync.Pool, error) {
	first, err := newDeflater(blockLevel)
	if err != nil {
		return nil, fmt.Errorf("audit: block deflater: %w", err)
	}
	p := &sync.Pool{New: func() any {
		w, err := newDeflater(blockLevel)
		if err != nil {
			panic(fmt.Sprintf("audit: block deflater made one deflater, then failed: %v", err))
		}
		return w
	}}
	p.Put(first)
	return p, nil
}

// standardDeflaters are compress/flate's deflaters, shared by every
// recorder that has no other; compress/flate accepts every level it names.
var standardDeflaters, _ = deflaters(standardDeflater)

// blockLevel trades the flusher's CPU for bytes on disk: deflate's fastest
// level keeps most of the ratio on these documents (docs/benchmarks.md).
const blockLevel = flate.BestSpeed

// inflate reads a block item's documents back.
func inflate(it store.Item) (*block, error) {
	name := inflatedName(it)
	inflated.Lock()
	b, ok := inflated.m[name]
	inflated.Unlock()
	if ok {
		return b, nil
	}
	b, err := inflateItem(it)
	if err != nil {
		return nil, err
	}
	keepInflated(name, b)
	return b, nil
}

func inflatedName(it store.Item) string {
	k := it.Key()
	return k.PK + "|" + k.SK + "|" + strconv.FormatInt(it.Int(attrEvents), 10)
}

func keepInflated(name string, b *block) {
	inflated.Lock()
	defer inflated.Unlock()
	if len(inflated.m) >= inflatedBlocks {
		clear(inflated.m)
	}
	inflated.m[name] = b
}

func inflateItem(it store.Item) (*block, error) {
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(it.Bytes(attrBlock))))
	if err != nil {
		return nil, fmt.Errorf("audit: block %s: %w", it.Key(), err)
	}
	b := &block{stored: it.Key().SK}
	for len(raw) > 0 {
		line, rest, _ := bytes.Cut(raw, []byte("\n"))
		raw = rest
		id, ok := docID(line)
		if !ok {
			return nil, fmt.Errorf("audit: block %s: an undecodable event", it.Key())
		}
		b.docs = append(b.docs, blockDoc{id: id, doc: line})
	}
	if len(b.docs) == 0 {
		return nil, fmt.Errorf("audit: block %s: empty", it.Key())
	}
	return b, nil
}

// docID is a stored document's event id, which appendStored writes first
// (an id is plain ASCII, never escaped).
func docID(doc []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(doc, []byte(`{"id":"`))
	if !ok {
		return "", false
	}
	id, _, ok := bytes.Cut(rest, []byte(`"`))
	return string(id), ok && len(id) > 0
}

// commitBlocks commits the batch's new events into their partitions'
// blocks, with their counts, in one commit. An event a block already holds
// (a replayed journal) is left out, and so is its count. The flusher is the
// only writer of blocks (flushMu, or the replay before it starts), so what
// it reads before the commit is what the commit changes.
func (r *Recorder) commitBlocks(ctx context.Context, oc oneCommitter, batch []journaled) error {
	type partition struct {
		pk  string
		new []*journaled
	}
	var parts []*partition
	byPK := map[string]*partition{}
	seen := make(map[string]bool, len(batch))
	var pks partitions
	for i := range batch {
		j := &batch[i]
		if seen[j.e.ID] {
			continue
		}
		seen[j.e.ID] = true
		pk := pks.pk(j).(string)
		p := byPK[pk]
		if p == nil {
			p = &partition{pk: pk}
			byPK[pk] = p
			parts = append(parts, p)
		}
		p.new = append(p.new, j)
	}
	var ops []store.Op
	fresh := make([]Event, 0, len(batch))
	written := map[string]*block{}
	for _, p := range parts {
		slices.SortFunc(p.new, func(a, b *journaled) int { return strings.Compare(a.e.ID, b.e.ID) })
		blocks, err := r.blocksFrom(ctx, p.pk, p.new[0].e.ID)
		if err != nil {
			return err
		}
		changed := map[*block]bool{}
		for _, j := range p.new {
			i := slices.IndexFunc(blocks, func(b *block) bool { return b.max() >= j.e.ID })
			var b *block
			switch {
			case i >= 0:
				b = blocks[i]
			case len(blocks) > 0 && len(blocks[len(blocks)-1].docs) < blockEvents:
				b = blocks[len(blocks)-1]
			default:
				b = &block{}
				blocks = append(blocks, b)
			}
			if b.has(j.e.ID) {
				continue
			}
			b.add(blockDoc{id: j.e.ID, doc: j.doc})
			changed[b] = true
			fresh = append(fresh, j.e)
		}
		for _, b := range blocks {
			if !changed[b] {
				continue
			}
			data, err := b.deflate(r.deflaters)
			if err != nil {
				return err
			}
			// A flush is milliseconds of CPU in one goroutine; on a
			// server with one P every request that becomes ready
			// meanwhile waits for it to end (up to the runtime's 10 ms
			// preemption). Yielding after each block lets them in
			// between blocks: the audited read's p99 at 5,000 and
			// 10,000 requests a second fell by a third
			// (docs/benchmarks.md, "The tail at a rate").
			runtime.Gosched()
			newest := b.docs[len(b.docs)-1]
			var e stored
			if err := json.Unmarshal(newest.doc, &e); err != nil {
				return fmt.Errorf("audit: block event %s: %w", newest.id, err)
			}
			it := store.NewItem(store.Key{PK: p.pk, SK: b.max()})
			it[attrBlock], it[attrEvents], it[store.AttrExpiresAt] = data, int64(len(b.docs)), expiry(e.OccurredAt)
			if b.stored != "" && b.stored != b.max() {
				ops = append(ops, store.DeleteOp(store.Key{PK: p.pk, SK: b.stored}))
			}
			ops = append(ops, store.PutOp(it))
			b.stored = b.max()
			written[inflatedName(it)] = b
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	ops = append(ops, counterOps(fresh)...)
	err := oc.InOneCommit(ctx, func(transact func([]store.Op) error) error { return transact(ops) })
	if err != nil {
		return fmt.Errorf("audit: commit: %w", err)
	}
	for name, b := range written {
		keepInflated(name, b)
	}
	return nil
}

// blocksFrom reads the partition's blocks an event at or above from can go
// to: every block whose greatest id is at or above it, and the last block
// below it (which takes events after it while it is not full). Oldest
// first.
func (r *Recorder) blocksFrom(ctx context.Context, pk, from string) ([]*block, error) {
	var out []*block
	after := ""
	for {
		page, err := r.st.Query(ctx, store.Query{PK: pk, After: after, Limit: 8, Reverse: true})
		if err != nil {
			return nil, fmt.Errorf("audit: commit: %w", err)
		}
		for _, it := range page.Items {
			after = it.Key().SK
			if !isBlock(it) {
				continue
			}
			b, err := inflate(it)
			if err != nil {
				return nil, err
			}
			out = append(out, &block{stored: b.stored, docs: slices.Clone(b.docs)})
			if it.Key().SK < from {
				slices.Reverse(out)
				return out, nil
			}
		}
		if !page.More {
			slices.Reverse(out)
			return out, nil
		}
	}
}
