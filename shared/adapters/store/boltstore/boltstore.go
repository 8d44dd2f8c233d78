// Package boltstore is the embedded adapter of the item-store port: one bbolt
// file holds every item, so the local server keeps its data across restarts
// without any network service. bbolt runs one write transaction at a time,
// which is what makes conditions, counters and transactions atomic here.
//
// It must never hand out an expired item: expiry is decided at read time
// against the clock, and physical deletion (the sweeper, or an overwrite) is
// only housekeeping.
package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/internal/itemrules"
)

var _ store.Store = (*Store)(nil)

var itemsBucket = []byte("items")

// Store is a store.Store on one bbolt file. It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	now  func() time.Time
	stop chan struct{}
	done chan struct{}

	cache *cache
	// writing holds the encoded keys the running write transaction marked
	// pending. Only that transaction's goroutine touches it, under bbolt's
	// writer lock.
	writing []string
	// keyBuf encodes the keys writing names, under the same lock: each is
	// kept as a string, so the encoding itself needs no allocation of its
	// own.
	keyBuf []byte
}

// Option configures Open.
type Option func(*Store)

// ErrLocked means another process holds the store.
var ErrLocked = errors.New("boltstore: the file is in use by another process")

// WithoutSync skips the fsync of every commit: a process crash loses
// nothing, an operating-system crash may lose (or corrupt) recent writes.
// Only for state that is cheap to lose, such as minute-long rate windows.
func WithoutSync() Option { return func(s *Store) { s.db.NoSync = true } }

// WithCacheBytes bounds the read cache (see cache) to n bytes of encoded
// items; 0 turns it off.
func WithCacheBytes(n int) Option { return func(s *Store) { s.cache.maxBytes = n } }

// WithClock replaces time.Now, so tests can move time and watch items expire.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open opens (creating if needed) the store at path. A second Open of the same
// file in another process fails after a second instead of waiting forever.
func Open(path string, opts ...Option) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(itemsBucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: init %s: %w", path, err)
	}
	s := &Store{db: db, now: time.Now, stop: make(chan struct{}), done: make(chan struct{}), cache: newCache(defaultCacheBytes)}
	for _, o := range opts {
		o(s)
	}
	go s.sweepLoop(sweepInterval)
	return s, nil
}

// Close stops the sweeper and closes the file.
func (s *Store) Close() error {
	close(s.stop)
	<-s.done
	return s.db.Close()
}

func (s *Store) unix() int64 { return s.now().Unix() }

// load returns the live item at k, or nil when it is absent or expired.
func load(b *bolt.Bucket, k store.Key, now int64) (store.Item, error) {
	return (&reader{c: b.Cursor()}).load(k, now)
}

// reader loads many keys in one transaction through one cursor and one key
// buffer: bolt's Get makes a cursor per key and grows its stack on every
// seek, two thirds of a four-key batch's allocations in bbolt, and a seek
// keeps nothing of the key it was given. A seek repositions the cursor from
// the root, so writes between reads do not matter.
type reader struct {
	c   *bolt.Cursor
	key []byte
}

func (r *reader) load(k store.Key, now int64) (store.Item, error) {
	it, _, err := r.loadSized(k, now)
	return it, err
}

// loadSized is load with the length of the item's encoding.
func (r *reader) loadSized(k store.Key, now int64) (store.Item, int, error) {
	r.key = appendKey(r.key[:0], k)
	at, raw := r.c.Seek(r.key)
	if raw == nil || !bytes.Equal(at, r.key) {
		return nil, 0, nil
	}
	it, err := decodeItem(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%w at %s", err, k)
	}
	if it.Expired(now) {
		return nil, 0, nil
	}
	return it, len(raw), nil
}

func save(b *bolt.Bucket, it store.Item) error {
	return b.Put(encodeKey(it.Key()), encodeItem(it))
}

func (s *Store) view(ctx context.Context, fn func(b *bolt.Bucket, now int64) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.unix()
	return s.db.View(func(tx *bolt.Tx) error { return fn(tx.Bucket(itemsBucket), now) })
}

// update runs fn in a write transaction. Every write in fn announces its
// keys first (willWrite, willWriteOps), so they are pending in the cache
// before the commit and dropped from it after.
func (s *Store) update(ctx context.Context, fn func(b *bolt.Bucket, now int64) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var written []string
	err := s.db.Update(func(tx *bolt.Tx) error {
		s.writing = nil
		err := fn(tx.Bucket(itemsBucket), s.unix())
		written, s.writing = s.writing, nil
		return err
	})
	s.cache.end(written)
	return err
}

// willWrite marks k pending before the running write transaction writes it.
func (s *Store) willWrite(k store.Key) {
	s.keyBuf = appendKey(s.keyBuf[:0], k)
	s.writing = append(s.writing, string(s.keyBuf))
	s.cache.begin(s.writing[len(s.writing)-1:])
}

// willWriteOps marks the keys that ops write pending, as willWrite does.
func (s *Store) willWriteOps(ops []store.Op) {
	from := len(s.writing)
	for _, op := range ops {
		if op.Kind != store.OpCheck {
			s.keyBuf = appendKey(s.keyBuf[:0], op.Key)
			s.writing = append(s.writing, string(s.keyBuf))
		}
	}
	s.cache.begin(s.writing[from:])
}

func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	var it store.Item
	err := s.points(ctx, []store.Key{k}, false, func(_ string, got store.Item) { it = got })
	if err == nil && it == nil {
		err = fmt.Errorf("%w: %s", store.ErrNotFound, k)
	}
	return it, err
}

func (s *Store) BatchGet(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	return s.batchGet(ctx, keys, false)
}

// BatchGetShared is BatchGet for a caller that only reads what it gets:
// cached items are answered as they are, not copied, so the caller must
// never change them or their []byte values (a later read would answer the
// change). Authentication reads a kilobyte of key document per key on
// every request, and copying it cost more than the rest of a cached read.
func (s *Store) BatchGetShared(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	return s.batchGet(ctx, keys, true)
}

func (s *Store) batchGet(ctx context.Context, keys []store.Key, shared bool) (map[string]store.Item, error) {
	if len(keys) > 100 {
		return nil, itemrules.Invalid("BatchGet takes at most 100 keys, got %d", len(keys))
	}
	out := make(map[string]store.Item, len(keys))
	err := s.points(ctx, keys, shared, func(name string, it store.Item) { out[name] = it })
	return out, err
}

// points reads keys, from the cache where it can, and calls found with
// each live item and its name (store.Key.String): a copy the caller may
// change or, when shared, the cache's own item.
func (s *Store) points(ctx context.Context, keys []store.Key, shared bool, found func(name string, it store.Item)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.unix()
	var (
		hitBuf   [8]entry
		missBuf  [8]int
		versBuf  [8]uint64
		keyBuf   [128]byte
		hits     = hitBuf[:0]
		miss     = missBuf[:0]
		versions = versBuf[:0]
	)
	// The lookups' key buffer stays on the stack; a read from bbolt makes
	// its own.
	key := keyBuf[:0]
	s.cache.mu.RLock()
	for i, k := range keys {
		key = appendKey(key[:0], k)
		e, ok, v := s.cache.lookup(key, now)
		if !ok {
			miss, versions = append(miss, i), append(versions, v)
		}
		hits = append(hits, e)
	}
	s.cache.mu.RUnlock()
	for _, e := range hits {
		switch {
		case e.it == nil:
		case shared:
			found(e.name, e.it)
		default:
			found(e.name, e.clone())
		}
	}
	if len(miss) == 0 {
		return nil
	}
	return s.db.View(func(tx *bolt.Tx) error {
		rd := reader{c: tx.Bucket(itemsBucket).Cursor()}
		for j, i := range miss {
			it, size, err := rd.loadSized(keys[i], now)
			if err != nil {
				return err
			}
			if it == nil {
				continue
			}
			// The caller gets the decoded item itself unless the cache
			// keeps it.
			e := newEntry(it, keys[i].String(), size)
			if s.cache.fill(rd.key, e, versions[j]) && !shared {
				it = e.clone()
			}
			found(e.name, it)
		}
		return nil
	})
}

func (s *Store) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	if err := errors.Join(itemrules.CheckItem(it), itemrules.CheckConds(conds)); err != nil {
		return err
	}
	return s.update(ctx, func(b *bolt.Bucket, now int64) error {
		cur, err := load(b, it.Key(), now)
		if err != nil {
			return err
		}
		if !itemrules.Holds(conds, cur) {
			return fmt.Errorf("%w: put %s", store.ErrConditionFailed, it.Key())
		}
		s.willWrite(it.Key())
		return save(b, it)
	})
}

func (s *Store) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	if err := errors.Join(itemrules.CheckKey(k), itemrules.CheckUpdate(u), itemrules.CheckConds(conds)); err != nil {
		return nil, err
	}
	var next store.Item
	err := s.update(ctx, func(b *bolt.Bucket, now int64) error {
		cur, err := load(b, k, now)
		if err != nil {
			return err
		}
		if !itemrules.Holds(conds, cur) {
			if itemrules.AppliedFence(u, conds, cur) {
				next = cur
				return nil
			}
			return fmt.Errorf("%w: update %s", store.ErrConditionFailed, k)
		}
		if next, err = itemrules.Apply(k, cur, u); err != nil {
			return err
		}
		s.willWrite(k)
		return save(b, next)
	})
	if err != nil {
		return nil, err
	}
	return next, nil
}

func (s *Store) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	if err := errors.Join(itemrules.CheckKey(k), itemrules.CheckConds(conds)); err != nil {
		return err
	}
	return s.update(ctx, func(b *bolt.Bucket, now int64) error {
		cur, err := load(b, k, now)
		if err != nil {
			return err
		}
		if !itemrules.Holds(conds, cur) {
			return fmt.Errorf("%w: delete %s", store.ErrConditionFailed, k)
		}
		s.willWrite(k)
		return b.Delete(encodeKey(k))
	})
}

func (s *Store) Transact(ctx context.Context, ops []store.Op) error {
	if err := itemrules.CheckOps(ops); err != nil {
		return err
	}
	return s.update(ctx, func(b *bolt.Bucket, now int64) error {
		// Keys are distinct, so every member's conditions see the state from
		// before the transaction however the writes are ordered.
		s.willWriteOps(ops)
		rd := reader{c: b.Cursor()}
		for i, op := range ops {
			cur, err := rd.load(op.Key, now)
			if err != nil {
				return err
			}
			if !itemrules.Holds(op.Conds, cur) {
				return &store.TxError{Index: i}
			}
			if err := write(b, op, cur); err != nil {
				return err
			}
		}
		return nil
	})
}

// write applies one member of a transaction whose conditions held against
// cur, the item as it was before.
func write(b *bolt.Bucket, op store.Op, cur store.Item) error {
	switch op.Kind {
	case store.OpPut:
		return save(b, op.Item)
	case store.OpUpdate:
		next, err := itemrules.Apply(op.Key, cur, op.Update)
		if err != nil {
			return err
		}
		return save(b, next)
	case store.OpDelete:
		return b.Delete(encodeKey(op.Key))
	}
	return nil
}

func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if q.PK == "" || q.Limit < 0 {
		return store.Page{}, itemrules.Invalid("query needs a pk and a non-negative limit")
	}
	var page store.Page
	err := s.view(ctx, func(b *bolt.Bucket, now int64) error {
		part := partitionPrefix(q.PK)
		within := append(append([]byte{}, part...), q.Prefix...)
		c := b.Cursor()
		var k, v []byte
		step := c.Next
		if q.Reverse {
			step = c.Prev
			k, v = seekBelow(c, lowest(successor(within), afterKey(part, q.After)))
		} else {
			k, v = c.Seek(highest(within, afterKey(part, q.After)))
		}
		for ; k != nil && bytes.HasPrefix(k, within); k, v = step() {
			sk := string(k[len(part):])
			if q.After != "" && sk == q.After {
				continue
			}
			it, err := decodeItem(v)
			if err != nil {
				return err
			}
			if it.Expired(now) {
				continue
			}
			if q.Limit > 0 && len(page.Items) == q.Limit {
				page.More = true
				break
			}
			page.Items = append(page.Items, it)
		}
		return nil
	})
	return page, err
}

func afterKey(part []byte, after string) []byte {
	if after == "" {
		return nil
	}
	return append(append([]byte{}, part...), after...)
}

// highest returns the larger start bound; nil means unbounded (the smallest).
func highest(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

// lowest returns the smaller exclusive end bound; nil means unbounded.
func lowest(a, b []byte) []byte {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case bytes.Compare(a, b) <= 0:
		return a
	}
	return b
}

// seekBelow positions c on the last key strictly below end (nil: the last key).
func seekBelow(c *bolt.Cursor, end []byte) ([]byte, []byte) {
	if end == nil {
		return c.Last()
	}
	if k, _ := c.Seek(end); k == nil {
		return c.Last()
	}
	return c.Prev()
}
