package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"platformapi/shared/store"
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

func (r *recorder) Transact(ctx context.Context, ops []store.Op) error {
	for _, op := range ops {
		switch op.Kind {
		case store.OpPut:
			r.note(op.Item.Key(), op.Item)
		case store.OpUpdate:
			r.noteUpdate(op.Key, op.Update)
		}
	}
	return r.Store.Transact(ctx, ops)
}

// Writes returns every byte string written to the store so far.
func (e *Env) Writes() [][]byte {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	return append([][]byte{}, e.rec.writes...)
}
