package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"platformapi/shared/adapters/store"
)

// recorder keeps every byte string written to the store, on any backend:
// keys, attribute names and values. What was never written cannot be at
// rest, so a test that finds no secret in Writes proves it of the raw
// store of either adapter.
type recorder struct {
	store.Store
	mu     sync.Mutex
	writes [][]byte
}

func (r *recorder) note(k store.Key, attrs map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, []byte(k.PK), []byte(k.SK))
	for name, v := range attrs {
		r.writes = append(r.writes, []byte(name))
		switch v := v.(type) {
		case []byte:
			r.writes = append(r.writes, v)
		case string:
			r.writes = append(r.writes, []byte(v))
		default:
			j, _ := json.Marshal(v)
			r.writes = append(r.writes, j, []byte(fmt.Sprint(v)))
		}
	}
}

func (r *recorder) noteUpdate(k store.Key, u store.Update) {
	r.note(k, u.Set)
	add := map[string]any{}
	for name, n := range u.Add {
		add[name] = n
	}
	r.note(k, add)
}

func (r *recorder) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	r.note(it.Key(), it)
	return r.Store.Put(ctx, it, conds...)
}

func (r *recorder) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	r.noteUpdate(k, u)
	return r.Store.Update(ctx, k, u, conds...)
}

func (r *recorder) noteOps(ops []store.Op) {
	for _, op := range ops {
		switch op.Kind {
		case store.OpPut:
			r.note(op.Item.Key(), op.Item)
		case store.OpUpdate:
			r.noteUpdate(op.Key, op.Update)
		}
	}
}

func (r *recorder) Transact(ctx context.Context, ops []store.Op) error {
	r.noteOps(ops)
	return r.Store.Transact(ctx, ops)
}

// embeddedStore is what the embedded store offers beyond the port, and
// what callers look for: authentication reads its cached items uncopied,
// the audit flusher commits a batch at once. A recorder that hid them
// would test other paths than the ones the local server runs.
type embeddedStore interface {
	BatchGetShared(ctx context.Context, keys []store.Key) (map[string]store.Item, error)
	InOneCommit(ctx context.Context, fn func(transact func(ops []store.Op) error) error) error
}

// embeddedRecorder is the recorder of an embedded store, with its extras.
type embeddedRecorder struct {
	*recorder
	embedded embeddedStore
}

func (r embeddedRecorder) BatchGetShared(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	return r.embedded.BatchGetShared(ctx, keys)
}

func (r embeddedRecorder) InOneCommit(ctx context.Context, fn func(transact func(ops []store.Op) error) error) error {
	return r.embedded.InOneCommit(ctx, func(transact func(ops []store.Op) error) error {
		return fn(func(ops []store.Op) error {
			r.noteOps(ops)
			return transact(ops)
		})
	})
}

// recording wraps st in a recorder that keeps the extras st has.
func recording(st store.Store) (*recorder, store.Store) {
	rec := &recorder{Store: st}
	if e, ok := st.(embeddedStore); ok {
		return rec, embeddedRecorder{recorder: rec, embedded: e}
	}
	return rec, rec
}

// Writes returns every byte string written to the store so far.
func (e *Env) Writes() [][]byte {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	return append([][]byte{}, e.rec.writes...)
}
