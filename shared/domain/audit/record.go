package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/ids"
	"platformapi/shared/base/latency"
)

// Recorder writes audit events on the request path.
//
// On AWS (NewRecorder) Record is one PutItem; the table's stream carries the
// new item to the rollup function, which reads it at no read-unit cost. A
// Lambda function ships the event through its log instead
// (NewShippingRecorder, see ship.go): no round trip on the request path.
//
// Embedded (NewEmbeddedRecorder) a request never waits for the store: Record
// appends the event to the journal (one pwrite(2), no fsync) and a flusher
// goroutine commits everything written since its last commit in one store
// commit (boltstore's InOneCommit; elsewhere as few transactions as the item
// limit allows), putting the events
// (on the condition that they are new: the event is its own marker) and
// adding them to their usage counters. Under load one commit carries many
// events, so the store's single writer and its fsync are paid per batch,
// not per request. A killed process loses nothing: its journal is replayed
// at the next start. Readers in the process call Flush first, so a request's
// event is listed (and counted) right after its answer.
//
// Events other transactions commit (settlements, SettlementOps) wait on the
// pending list, which the flusher's periodic Catchup counts; the rollup's
// marker makes a second count impossible.
type Recorder struct {
	st      store.Store
	now     func() time.Time
	pending bool

	ship    *shipper
	rollup  *Rollup
	journal *journal
	// deflaters compress the embedded store's blocks (WithDeflater).
	deflaters *sync.Pool
	flushMu   sync.Mutex
	window    atomic.Int64 // the longest an event was on no disk, in ns
	stop      context.CancelFunc
	done      sync.WaitGroup
}

// NewRecorder is the AWS recorder: one Put per event, rolled up by the stream.
func NewRecorder(st store.Store, now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{st: st, now: now, deflaters: standardDeflaters}
}

// maxBacklog bounds the events waiting in the journal for the flusher: a
// request that finds it full commits them itself, so memory and the tail a
// machine crash can lose stay bounded when the store falls behind.
const maxBacklog = 20_000

// flushEvery is how often the flusher commits the journal to the store. The
// journal's fsync, not this commit, bounds what a machine crash loses, and
// readers flush for themselves: a longer period only makes batches larger,
// so the store's single writer and its fsync are paid less often.
const flushEvery = 200 * time.Millisecond

// syncEvery is how often the journal is fsynced when it was written: with
// the fsync's own time, the most a machine crash can lose.
const syncEvery = 20 * time.Millisecond

// catchupEvery is how often the embedded worker counts the pending list
// (settlements written by other transactions) and retries a failed flush.
// An empty list costs one cursor seek.
const catchupEvery = 2 * time.Second

// EmbeddedOption configures NewEmbeddedRecorder.
type EmbeddedOption func(*Recorder) error

// WithDeflater compresses the embedded store's blocks with newDeflater's
// deflaters instead of compress/flate's: the same format, which every
// reader inflates alike. The local process injects a faster one
// (audit/fastdeflate) that the Lambda functions, which never write a
// block, do not link.
func WithDeflater(newDeflater NewDeflater) EmbeddedOption {
	return func(r *Recorder) (err error) {
		r.deflaters, err = deflaters(newDeflater)
		return err
	}
}

// NewEmbeddedRecorder is the in-process recorder with its journal in dir. It
// first commits what the journal of a previous process holds, then starts
// the flusher, which counts what that process left pending. Close stops it.
func NewEmbeddedRecorder(st store.Store, now func() time.Time, dir string, opts ...EmbeddedOption) (*Recorder, error) {
	r := NewRecorder(st, now)
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	j, left, segs, err := openJournal(dir)
	if err != nil {
		return nil, err
	}
	r.pending = true
	r.rollup = NewRollup(st, RollupPending())
	r.journal = j
	if err := r.commit(context.Background(), left, true); err != nil {
		j.close()
		return nil, fmt.Errorf("audit: replay the journal: %w", err)
	}
	j.remove(segs)
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	r.done.Add(2)
	go r.run(ctx)
	go r.syncLoop(ctx)
	return r, nil
}

// Record stores one event: with a Put, once the event is durable; shipped,
// once its line is written; embedded, once it is in the journal, which a
// process kill does not lose.
// It assigns the id (sortable by OccurredAt, which defaults to now and is
// kept to the millisecond the id carries) and the retention; KeyID is the
// last element of KeyPath. Errors are internal: the caller logs them and
// answers the request anyway.
func (r *Recorder) Record(ctx context.Context, e Event) error {
	if err := check(&e); err != nil {
		return err
	}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = r.now()
	}
	if r.ship != nil {
		e, err := r.Prepare(e)
		if err != nil {
			return err
		}
		return r.ship.send(e)
	}
	if r.journal == nil {
		ctx, cancel := context.WithTimeout(ctx, recordTimeout)
		defer cancel()
		// A request has one event: one written again (a replay writing
		// its call's event, see Event.Name) is left as it is.
		if err := r.st.Put(ctx, prepare(&e), isNew...); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("audit: record: %w", err)
		}
		return nil
	}
	stamp(&e)
	waiting, err := r.journal.append(e, shardFor(&e))
	if err != nil {
		return err
	}
	if waiting >= maxBacklog {
		ctx, cancel := context.WithTimeout(ctx, recordTimeout)
		defer cancel()
		return r.Flush(ctx)
	}
	return nil
}

// Timings are where the embedded recorder's time goes, for the benchmark
// (docs/benchmarks.md): a request's wait for the journal's lock and its
// write(2), the syncer's fsync, and the flusher's commit (its fsync
// included).
type Timings struct {
	AppendWait, AppendWrite, Sync, Commit latency.Histogram
}

// Timings are the embedded recorder's; nil for the others.
func (r *Recorder) Timings() *Timings {
	if r.journal == nil {
		return nil
	}
	return r.journal.timings
}

// recordTimeout bounds what Record waits on the store (a Put, or the commit
// a full journal backlog forces; an append to the journal makes no timer):
// its caller passes no deadline, because the event of an answered request
// is written even after the request's own deadline. It is generous: the
// event is the audit trail of an answer already given, and a store that
// throttles (or an emulator shared by many clients) may take seconds.
const recordTimeout = 15 * time.Second

// check refuses an event that lacks what every event has.
func check(e *Event) error {
	if e.AccountID == "" || len(e.KeyPath) == 0 || e.Operation == "" || e.Status < 100 || e.Status > 599 {
		return fmt.Errorf("audit: record needs an account, a key path, an operation and a status")
	}
	return nil
}

// stamp assigns the event's id unless it is named (sortable by
// OccurredAt, kept to the millisecond the id carries), its key id and its
// charge.
func stamp(e *Event) {
	e.OccurredAt = e.OccurredAt.UTC().Truncate(time.Millisecond)
	if e.ID == "" {
		e.ID = ids.New("aud", e.OccurredAt)
	}
	e.KeyID = e.KeyPath[len(e.KeyPath)-1]
	e.setCharged(e.ChargedMicro)
}

// prepare stamps the event and returns its item in its shard.
func prepare(e *Event) store.Item {
	stamp(e)
	return encode(e, shardFor(e))
}

// shardFor is a stamped event's shard: a random one, or for a named event
// the one its id gives, so that writing it again finds the same item.
func shardFor(e *Event) int {
	if e.named {
		return shardOf(e.ID)
	}
	return rand.IntN(Shards)
}

// SettlementOps are the items of an event that commits inside another
// transaction: a charge settled outside any request (a fill, a
// confirmation, a released hold) is recorded with the balance change it
// explains, so neither exists without the other. The pending entry lets
// the embedded recorder's periodic catch-up count it; on AWS the stream
// counts the event and the entry only expires (one small write per
// settlement).
func SettlementOps(e *Event) []store.Op {
	it := prepare(e)
	p := store.NewItem(pendingKey(e.ID))
	p[store.AttrDoc], p[store.AttrExpiresAt] = it[store.AttrDoc], it[store.AttrExpiresAt]
	return []store.Op{store.PutOp(it), store.PutOp(p)}
}

// Close stops the flusher and commits what the journal still holds; what
// it cannot commit stays in the journal for the next start.
func (r *Recorder) Close() {
	if r.stop == nil {
		return
	}
	r.stop()
	r.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		slog.Warn("audit: the journal keeps events for the next start", "err", err)
	}
	r.journal.close()
}

// LossWindow is the longest an answered request's event was on no disk
// (written to the journal, not yet fsynced) since the last call: what a
// machine crash (not a process crash) could have lost at that moment.
func (r *Recorder) LossWindow() time.Duration { return time.Duration(r.window.Swap(0)) }

func (r *Recorder) syncLoop(ctx context.Context) {
	defer r.done.Done()
	tick := time.NewTicker(syncEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		waited, err := r.journal.sync()
		if err != nil {
			slog.Warn("audit: journal fsync failed; the flusher's commit still makes events durable", "err", err)
		}
		for {
			old := r.window.Load()
			if int64(waited) <= old || r.window.CompareAndSwap(old, int64(waited)) {
				break
			}
		}
	}
}

func (r *Recorder) run(ctx context.Context) {
	defer r.done.Done()
	catchup := time.NewTicker(catchupEvery)
	defer catchup.Stop()
	flush := time.NewTicker(flushEvery)
	defer flush.Stop()
	for {
		// The first round counts what a previous process left pending.
		if err := r.Catchup(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("audit: catchup failed; the next tick retries", "err", err)
		}
	flushing:
		for {
			select {
			case <-ctx.Done():
				return
			case <-catchup.C:
				break flushing
			case <-flush.C:
				if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
					slog.Warn("audit: flush failed; the next tick retries", "err", err)
				}
			}
		}
	}
}

// Flush commits every event the journal holds; once it returns nil, every
// event recorded before the call is listed and counted. Readers in the
// process call it first (Repo.ReadingAfter).
func (r *Recorder) Flush(ctx context.Context) error {
	if r.journal == nil {
		return nil
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	batch, segs := r.journal.take()
	t0 := time.Now()
	err := r.commit(ctx, batch, false)
	if len(batch) > 0 {
		r.journal.timings.Commit.Since(t0)
	}
	if err != nil {
		r.journal.giveBack(batch, segs)
		return err
	}
	r.journal.remove(segs)
	return nil
}

// commit writes journaled events and counts them: into blocks in one
// commit where the store offers it (commitBlocks), else as an item each in
// transactions of at most store.MaxTransactItems, each event's item and one
// update per counter the chunk touches. A replay first reads which events
// exist.
func (r *Recorder) commit(ctx context.Context, batch []journaled, replay bool) error {
	if oc, ok := r.st.(oneCommitter); ok && len(batch) > 0 {
		return r.commitBlocks(ctx, oc, batch)
	}
	for len(batch) > 0 {
		n, counters := 0, map[store.Key]bool{}
		for n < len(batch) {
			k := counterKey(&batch[n].e)
			grow := 1
			if !counters[k] {
				grow++
			}
			if n+len(counters)+grow > store.MaxTransactItems {
				break
			}
			counters[k] = true
			n++
		}
		if err := r.commitChunk(ctx, batch[:n], replay); err != nil {
			return err
		}
		batch = batch[n:]
	}
	return nil
}

// commitChunk puts the chunk's new events with their counter updates; a
// replay first reads which events exist and leaves them out.
func (r *Recorder) commitChunk(ctx context.Context, chunk []journaled, replay bool) error {
	if replay {
		keys := make([]store.Key, 0, len(chunk))
		for i := range chunk {
			keys = append(keys, chunk[i].item().Key())
		}
		seen, err := r.st.BatchGet(ctx, keys)
		if err != nil {
			return fmt.Errorf("audit: commit: %w", err)
		}
		chunk = slices.DeleteFunc(slices.Clone(chunk), func(j journaled) bool {
			_, done := seen[j.item().Key().String()]
			return done
		})
	}
	err := commitNew(chunk, func(ops []store.Op) error { return r.st.Transact(ctx, ops) })
	if err != nil {
		return fmt.Errorf("audit: commit: %w", err)
	}
	return nil
}

// commitNew puts events, each on the condition that it does not exist yet,
// with their counter updates, in one transaction. An event that exists was
// committed with its counts (a replayed journal, a duplicate line) and is
// left out: a failed condition names it, and the rest is tried again.
func commitNew(batch []journaled, transact func([]store.Op) error) error {
	fresh := make([]Event, 0, len(batch))
	items := make([]store.Item, 0, len(batch))
	ids := make(map[string]bool, len(batch))
	var parts partitions
	for i := range batch {
		if !ids[batch[i].e.ID] {
			ids[batch[i].e.ID] = true
			fresh = append(fresh, batch[i].e)
			items = append(items, parts.item(&batch[i]))
		}
	}
	for len(fresh) > 0 {
		ops := make([]store.Op, 0, len(fresh)+1)
		for _, it := range items {
			ops = append(ops, store.PutOp(it, isNew...))
		}
		err := transact(append(ops, counterOps(fresh)...))
		var tx *store.TxError
		if errors.As(err, &tx) && tx.Index < len(fresh) {
			// Already committed, with its counts.
			fresh = append(fresh[:tx.Index], fresh[tx.Index+1:]...)
			items = append(items[:tx.Index], items[tx.Index+1:]...)
			continue
		}
		return err
	}
	return nil
}

// isNew is the condition of every event's put, shared: conditions are
// only read.
var isNew = []store.Cond{store.NotExists()}

// Settle makes every event recorded, or committed by another
// transaction, before the call listed and counted: the journal, and
// embedded the pending list too (a settlement's event commits with its
// balance change). Readers in the process call it first.
func (r *Recorder) Settle(ctx context.Context) error {
	if r.pending {
		return r.Catchup(ctx)
	}
	return r.Flush(ctx)
}

// Catchup commits the journal, then counts every event on the pending
// list, oldest first: settlements, and what a previous process left. Safe
// to run alongside the flusher: the rollup marker lets only one of them
// count an event.
func (r *Recorder) Catchup(ctx context.Context) error {
	if !r.pending {
		return errors.New("audit: catchup is for the embedded recorder")
	}
	if err := r.Flush(ctx); err != nil {
		return err
	}
	after := ""
	for {
		page, err := r.st.Query(ctx, store.Query{PK: pendingPK, After: after, Limit: chunkEvents})
		if err != nil {
			return fmt.Errorf("audit: catchup: %w", err)
		}
		evs := make([]Event, 0, len(page.Items))
		for _, it := range page.Items {
			e, err := DecodeItem(it)
			if err != nil {
				return err
			}
			evs = append(evs, e)
			after = it.Key().SK
		}
		if _, err := r.rollup.Apply(ctx, evs); err != nil {
			return err
		}
		if !page.More {
			return nil
		}
	}
}
