package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"platformapi/shared/adapters/store"
)

// Unit collects the writes of an operation so that they commit in one
// transaction together with the stored response. Without it, a crash or a
// storage fault between "the resource was written" and "the response was
// stored" would leave a resource whose retry runs the operation a second
// time. Operations whose writes are plain (no read of their own writes, no
// condition whose failure they must interpret) opt in.
type Unit struct {
	mu     sync.Mutex
	ops    []store.Op
	groups []group
	after  []func()
}

// group is the ops of one Transact call in the unit, with the operation's
// reading of a failed condition among them.
type group struct {
	start, n int
	failed   func(i int) error
}

type unitKey struct{}

// WithUnit returns a context whose writes through a Deferring store are
// collected in u instead of being applied.
func WithUnit(ctx context.Context, u *Unit) context.Context {
	return context.WithValue(ctx, unitKey{}, u)
}

func unitFrom(ctx context.Context) *Unit { u, _ := ctx.Value(unitKey{}).(*Unit); return u }

// InUnit reports whether writes on ctx commit with a stored response: an
// effect recorded in the unit then happens exactly when the response is
// stored, so a retry replays it and never records it again.
func InUnit(ctx context.Context) bool { return unitFrom(ctx) != nil }

// AfterCommit runs f once the operation's writes are committed, or at once
// when ctx carries no unit: effects that announce a change (webhook events)
// must never announce one that did not happen.
func AfterCommit(ctx context.Context, f func()) {
	u := unitFrom(ctx)
	if u == nil {
		f()
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.after = append(u.after, f)
}

// Committed runs what waited for the commit; the caller calls it once the
// unit's writes are applied.
func (u *Unit) Committed() {
	u.mu.Lock()
	after := u.after
	u.after = nil
	u.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// Len is the number of collected writes.
func (u *Unit) Len() int { u.mu.Lock(); defer u.mu.Unlock(); return len(u.ops) }

func (u *Unit) add(ops ...store.Op) { u.addGroup(ops, nil) }

func (u *Unit) addGroup(ops []store.Op, failed func(i int) error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if failed != nil {
		u.groups = append(u.groups, group{start: len(u.ops), n: len(ops), failed: failed})
	}
	u.ops = append(u.ops, ops...)
}

// explain is the operation's own error for the failed unit op j, or nil.
func (u *Unit) explain(j int) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, g := range u.groups {
		if j >= g.start && j < g.start+g.n {
			return g.failed(j - g.start)
		}
	}
	return nil
}

// Transact applies ops in one transaction; inside a unit, on a Deferring
// store, it adds them to the unit instead. failed reads the index (into ops)
// of a member whose condition failed as the operation's own error (a token
// already redeemed, an ancestor revoked), whether the transaction runs now
// or when the unit commits; nil keeps the store's error.
func Transact(ctx context.Context, st store.Store, ops []store.Op, failed func(i int) error) error {
	if _, ok := st.(deferring); ok {
		if u := unitFrom(ctx); u != nil {
			u.addGroup(ops, failed)
			return nil
		}
	}
	err := st.Transact(ctx, ops)
	var tx *store.TxError
	if errors.As(err, &tx) && failed != nil {
		if explained := failed(tx.Index); explained != nil {
			return explained
		}
	}
	return err
}

// CommitError is a collected write whose condition failed at commit: the
// state it was computed from changed concurrently. Nothing was written. Err
// is the operation's own reading of the failure where it gave one (see
// Transact), else the store's.
type CommitError struct{ Err error }

func (e *CommitError) Error() string { return "idempotency: commit: " + e.Err.Error() }
func (e *CommitError) Unwrap() error { return e.Err }

// CompleteUnit stores the response and applies the unit's writes in one
// transaction: both happen or neither does.
func (s *Store) CompleteUnit(ctx context.Context, c *Claim, resp Response, u *Unit) error {
	if u == nil || u.Len() == 0 {
		return s.Complete(ctx, c, resp)
	}
	doc, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	u.mu.Lock()
	ops := append([]store.Op{store.UpdateOp(c.key, store.Update{Set: map[string]any{
		"state": "done", "response": doc, store.AttrExpiresAt: s.now().Add(Retention).Unix(),
	}}, store.AttrEquals("token", c.token))}, u.ops...)
	u.mu.Unlock()
	err = s.st.Transact(ctx, ops)
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index > 0 {
		if explained := u.explain(tx.Index - 1); explained != nil {
			return &CommitError{Err: explained}
		}
		return &CommitError{Err: err}
	}
	if err != nil {
		return fmt.Errorf("idempotency: complete: %w", err)
	}
	return nil
}

// Deferring wraps a store so that, inside a context carrying a Unit, writes
// are collected instead of applied (reads pass through). Outside such a
// context it is the store itself.
func Deferring(st store.Store) store.Store { return deferring{Store: st} }

type deferring struct{ store.Store }

func (d deferring) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	if u := unitFrom(ctx); u != nil {
		u.add(store.PutOp(it, conds...))
		return nil
	}
	return d.Store.Put(ctx, it, conds...)
}

// Update in a unit returns no item: operations that need the updated item
// back do not opt in.
func (d deferring) Update(ctx context.Context, k store.Key, up store.Update, conds ...store.Cond) (store.Item, error) {
	if u := unitFrom(ctx); u != nil {
		u.add(store.UpdateOp(k, up, conds...))
		return nil, nil
	}
	return d.Store.Update(ctx, k, up, conds...)
}

func (d deferring) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	if u := unitFrom(ctx); u != nil {
		u.add(store.DeleteOp(k, conds...))
		return nil
	}
	return d.Store.Delete(ctx, k, conds...)
}

func (d deferring) Transact(ctx context.Context, ops []store.Op) error {
	if u := unitFrom(ctx); u != nil {
		u.add(ops...)
		return nil
	}
	return d.Store.Transact(ctx, ops)
}
