package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/shared/ids"
	"platformapi/shared/store"
)

// Recorder writes audit events on the request path.
//
// On AWS (NewRecorder) Record is one PutItem; the table's stream carries the
// new item to the rollup function, which reads it at no read-unit cost.
// Embedded (NewEmbeddedRecorder) there is no stream: Record is one store
// transaction that writes the event and its entry on the pending list, and a
// goroutine rolls events up from a bounded channel. A full channel or a
// crash loses nothing: the pending list still holds the event and Catchup
// (at start, and whenever the channel overflowed or a rollup failed) counts
// it; the rollup's marker makes a second count impossible.
type Recorder struct {
	st      store.Store
	now     func() time.Time
	pending bool

	rollup *Rollup
	queue  chan Event
	missed atomic.Bool
	stop   context.CancelFunc
	done   sync.WaitGroup
}

// NewRecorder is the AWS recorder: one Put per event, rolled up by the stream.
func NewRecorder(st store.Store, now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{st: st, now: now}
}

// queueSize bounds the events waiting for the in-process rollup; beyond it
// Record does not wait, and Catchup counts the overflow from the pending list.
const queueSize = 4096

// catchupEvery is how often the embedded worker counts the pending list:
// events written by other transactions (settlements), an overflow, a failed
// rollup. An empty list costs one cursor seek.
const catchupEvery = 2 * time.Second

// NewEmbeddedRecorder is the in-process recorder: it starts the rollup
// goroutine, which first counts what a previous process left pending. Close
// stops it.
func NewEmbeddedRecorder(st store.Store, now func() time.Time) *Recorder {
	r := NewRecorder(st, now)
	r.pending = true
	r.rollup = NewRollup(st, RollupPending())
	r.queue = make(chan Event, queueSize)
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	r.missed.Store(true)
	r.done.Add(1)
	go r.run(ctx)
	return r
}

// Record stores one event and returns once it is durable. It assigns the id
// (sortable by OccurredAt, which defaults to now and is kept to the
// millisecond the id carries) and the retention; KeyID is the last element
// of KeyPath. Errors are internal: the caller logs them and answers the
// request anyway.
func (r *Recorder) Record(ctx context.Context, e Event) error {
	if e.AccountID == "" || len(e.KeyPath) == 0 || e.Operation == "" || e.Status < 100 || e.Status > 599 {
		return fmt.Errorf("audit: record needs an account, a key path, an operation and a status")
	}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = r.now()
	}
	it := prepare(&e)
	if !r.pending {
		if err := r.st.Put(ctx, it); err != nil {
			return fmt.Errorf("audit: record: %w", err)
		}
		return nil
	}
	p := store.NewItem(pendingKey(e.ID))
	p[store.AttrDoc], p[store.AttrExpiresAt] = it[store.AttrDoc], it[store.AttrExpiresAt]
	if err := r.st.Transact(ctx, []store.Op{store.PutOp(it), store.PutOp(p)}); err != nil {
		return fmt.Errorf("audit: record: %w", err)
	}
	select {
	case r.queue <- e:
	default:
		r.missed.Store(true)
	}
	return nil
}

// prepare assigns the event's id (sortable by OccurredAt, kept to the
// millisecond the id carries) and returns its item in a random shard.
func prepare(e *Event) store.Item {
	e.OccurredAt = e.OccurredAt.UTC().Truncate(time.Millisecond)
	e.ID = ids.New("aud", e.OccurredAt)
	e.KeyID = e.KeyPath[len(e.KeyPath)-1]
	e.setCharged(e.ChargedMicro)
	return encode(e, rand.IntN(Shards))
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

// Close stops the embedded rollup and waits for it; events still queued
// stay on the pending list for the next Catchup.
func (r *Recorder) Close() {
	if r.stop != nil {
		r.stop()
		r.done.Wait()
	}
}

// rollupBatch is how many queued events one rollup call takes at most.
const rollupBatch = 32

func (r *Recorder) run(ctx context.Context) {
	defer r.done.Done()
	tick := time.NewTicker(catchupEvery)
	defer tick.Stop()
	batch := make([]Event, 0, rollupBatch)
	for {
		if r.missed.Swap(false) {
			if err := r.Catchup(ctx); err != nil {
				r.missed.Store(true)
				if ctx.Err() == nil {
					slog.Warn("audit: catchup failed", "err", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// Events other transactions wrote (settlements) wait on the
			// pending list for this catch-up.
			r.missed.Store(true)
			continue
		case e := <-r.queue:
			batch = append(batch[:0], e)
		}
	drain:
		for len(batch) < rollupBatch {
			select {
			case e := <-r.queue:
				batch = append(batch, e)
			default:
				break drain
			}
		}
		if _, err := r.rollup.Apply(ctx, batch); err != nil {
			r.missed.Store(true)
			if ctx.Err() == nil {
				slog.Warn("audit: rollup failed; catchup will retry", "err", err)
			}
		}
	}
}

// Catchup counts every event on the pending list, oldest first: after a
// restart, an overflow or a failed rollup. Safe to run alongside the
// worker: the rollup marker lets only one of them count an event.
func (r *Recorder) Catchup(ctx context.Context) error {
	if !r.pending {
		return errors.New("audit: catchup is for the embedded recorder")
	}
	after := ""
	for {
		page, err := r.st.Query(ctx, store.Query{PK: pendingPK, After: after, Limit: rollupBatch})
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
