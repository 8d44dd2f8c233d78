//go:build soakfaults

package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"platformapi/shared/adapters/store"
)

// faultStore is the server's store with faults in it: a crash after the
// n-th matching write commits, writes dropped from what commits, and
// captures held back.
type faultStore struct {
	store.Store
	crashAfter int64
	match      string
	writes     atomic.Int64
	drop       func(store.Op) bool
	// stall holds every third capture back this long before it is tried.
	stall    time.Duration
	captures atomic.Int64
}

func dropNone(store.Op) bool { return false }

// isHoldMarker is the marker a call's hold on a quiet account leaves
// where the sliced account would keep it.
func isHoldMarker(op store.Op) bool { return op.Kind == store.OpPut && op.Item.Has("inAccount") }

// isOutboxEvent is an event waiting in the outbox for its fan-out.
func isOutboxEvent(op store.Op) bool {
	return op.Kind == store.OpPut && strings.HasPrefix(op.Key.PK, "evo#")
}

// committed counts a write that committed and ends the process when it is
// the one to crash after: no deferred function runs, no buffer is flushed
// by the process, as with SIGKILL.
func (s *faultStore) committed(keys ...store.Key) {
	if s.crashAfter <= 0 {
		return
	}
	if s.match != "" && !anyMatch(keys, s.match) {
		return
	}
	if s.writes.Add(1) == s.crashAfter {
		os.Exit(137)
	}
}

func anyMatch(keys []store.Key, p string) bool {
	for _, k := range keys {
		if strings.HasPrefix(k.PK, p) || strings.HasPrefix(k.SK, p) {
			return true
		}
	}
	return false
}

func (s *faultStore) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	if s.drop(store.PutOp(it, conds...)) {
		return nil
	}
	err := s.Store.Put(ctx, it, conds...)
	if err == nil {
		s.committed(it.Key())
	}
	return err
}

func (s *faultStore) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	it, err := s.Store.Update(ctx, k, u, conds...)
	if err == nil {
		s.committed(k)
	}
	return it, err
}

func (s *faultStore) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	err := s.Store.Delete(ctx, k, conds...)
	if err == nil {
		s.committed(k)
	}
	return err
}

// isCapture is the write that captures a credit hold: its state set to
// captured, wherever the hold is kept.
func isCapture(op store.Op) bool {
	return op.Kind == store.OpUpdate && op.Update.Set["state"] == "captured" &&
		(strings.HasPrefix(op.Key.SK, "hold#") || op.Key.SK == "hold")
}

// Transact drops the faulty ops and renumbers a failed condition's index
// back to the caller's ops, which read it to tell which member failed.
func (s *faultStore) Transact(ctx context.Context, ops []store.Op) error {
	if s.stall > 0 && len(ops) > 0 && isCapture(ops[0]) && s.captures.Add(1)%3 == 1 {
		fmt.Fprintf(os.Stderr, "soak: a capture of %s held back %s\n", ops[0].Key, s.stall)
		time.Sleep(s.stall)
	}
	kept := make([]store.Op, 0, len(ops))
	index := make([]int, 0, len(ops))
	keys := make([]store.Key, 0, len(ops))
	for i, op := range ops {
		keys = append(keys, op.Key)
		if !s.drop(op) {
			kept, index = append(kept, op), append(index, i)
		}
	}
	err := s.Store.Transact(ctx, kept)
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index >= 0 && tx.Index < len(index) {
		return &store.TxError{Index: index[tx.Index]}
	}
	if err == nil {
		s.committed(keys...)
	}
	return err
}

// wrap is st with faults. Authentication's shared reads stay on the
// request path: the process hands them to the kernel apart from the store
// (app.Runtime.SharedReads), so the soak tests the server that ships.
func wrap(st store.Store, crashAfter int64, match string, drop func(store.Op) bool, stall time.Duration) store.Store {
	return &faultStore{Store: st, crashAfter: crashAfter, match: match, drop: drop, stall: stall}
}
