package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/internal/itemrules"
)

// InOneCommit runs fn with a transact that applies a group of ops as
// Transact does (all or none; a failed condition is a *store.TxError with
// the member's index, and nothing of the group applied), except that a
// group may hold any number of ops, and that every group fn applies is
// committed together: one bbolt commit, one fsync. An error from fn (or
// from a group) rolls back every group.
//
// Store.Transact's limit of store.MaxTransactItems is DynamoDB's; bbolt has
// none, and its single writer pays one fsync per commit whatever the commit
// holds. A writer of many small items (the audit journal's flusher) uses
// this where the store offers it, and batches by the limit where it does not.
func (s *Store) InOneCommit(ctx context.Context, fn func(transact func(ops []store.Op) error) error) error {
	return s.update(ctx, func(b *bolt.Bucket, now int64) error {
		b.FillPercent = appendFill
		return fn(func(ops []store.Op) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			s.willWriteOps(ops)
			return transactAll(b, now, ops)
		})
	})
}

// appendFill is how full InOneCommit packs the pages it splits. bbolt
// splits a grown node into pages half full by default, which suits random
// inserts; a bulk writer's keys land at a few insertion points (an audit
// event's sort key is time-ordered within its partition), so a split page
// is never written into again and half of every page would stay empty:
// twice the pages to allocate, spill and write per commit.
const appendFill = 1.0

// transactAll checks every member's conditions against the state before the
// group, then applies them.
func transactAll(b *bolt.Bucket, now int64, ops []store.Op) error {
	if len(ops) == 0 {
		return itemrules.Invalid("a transaction holds at least one member")
	}
	seen := make(map[store.Key]bool, len(ops))
	curs := make([]store.Item, len(ops))
	rd := reader{c: b.Cursor()}
	for i, op := range ops {
		if err := itemrules.CheckOps(ops[i : i+1]); err != nil {
			return err
		}
		if seen[op.Key] {
			return itemrules.Invalid("member %d: key %s appears twice", i, op.Key)
		}
		seen[op.Key] = true
		cur, err := rd.load(op.Key, now)
		if err != nil {
			return err
		}
		if !itemrules.Holds(op.Conds, cur) {
			return &store.TxError{Index: i}
		}
		curs[i] = cur
	}
	for i, op := range ops {
		if err := write(b, op, curs[i]); err != nil {
			return err
		}
	}
	return nil
}
