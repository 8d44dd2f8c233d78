package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
)

func openInternal(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func cached(s *Store, k store.Key) bool {
	s.cache.mu.RLock()
	defer s.cache.mu.RUnlock()
	_, ok := s.cache.entries[string(encodeKey(k))]
	return ok
}

func TestAReadItemIsAnsweredFromTheCache(t *testing.T) {
	ctx := context.Background()
	s := openInternal(t)
	k := store.Key{PK: "p", SK: "a"}
	if err := s.Put(ctx, store.Item{"pk": "p", "sk": "a", "n": int64(1)}); err != nil {
		t.Fatal(err)
	}
	if cached(s, k) {
		t.Fatal("a put filled the cache")
	}
	if _, err := s.Get(ctx, k); err != nil {
		t.Fatal(err)
	}
	if !cached(s, k) {
		t.Fatal("a read did not fill the cache")
	}
}

func TestInOneCommitIsSeenByTheNextRead(t *testing.T) {
	ctx := context.Background()
	s := openInternal(t)
	a, b := store.Key{PK: "p", SK: "a"}, store.Key{PK: "p", SK: "b"}
	for _, k := range []store.Key{a, b} {
		if err := s.Put(ctx, store.Item{"pk": k.PK, "sk": k.SK, "n": int64(1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BatchGet(ctx, []store.Key{k}); err != nil || !cached(s, k) {
			t.Fatalf("%s not cached: %v", k, err)
		}
	}
	err := s.InOneCommit(ctx, func(transact func([]store.Op) error) error {
		if err := transact([]store.Op{store.UpdateOp(a, store.Update{Add: map[string]int64{"n": 1}})}); err != nil {
			return err
		}
		return transact([]store.Op{store.DeleteOp(b)})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.BatchGet(ctx, []store.Key{a, b})
	if err != nil || len(got) != 1 || got[a.String()].Int("n") != 2 {
		t.Fatalf("after the commit: %v, %v", got, err)
	}
}

func TestARolledBackInOneCommitLeavesTheReadItemAsItWas(t *testing.T) {
	ctx := context.Background()
	s := openInternal(t)
	a := store.Key{PK: "p", SK: "a"}
	if err := s.Put(ctx, store.Item{"pk": "p", "sk": "a", "n": int64(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, a); err != nil {
		t.Fatal(err)
	}
	err := s.InOneCommit(ctx, func(transact func([]store.Op) error) error {
		if err := transact([]store.Op{store.UpdateOp(a, store.Update{Add: map[string]int64{"n": 1}})}); err != nil {
			return err
		}
		return transact([]store.Op{store.CheckOp(store.Key{PK: "p", SK: "absent"}, store.Exists())})
	})
	if err == nil {
		t.Fatal("a failed group committed")
	}
	if got, err := s.Get(ctx, a); err != nil || got.Int("n") != 1 {
		t.Fatalf("after the rollback: %v, %v", got, err)
	}
}

func TestACachedItemPastItsExpiryIsNotFound(t *testing.T) {
	ctx := context.Background()
	s, k, now := cachedExpiringItem(t)
	now.Add(10)
	if _, err := s.Get(ctx, k); err == nil {
		t.Fatal("an expired cached item was answered")
	}
	if got, err := s.BatchGet(ctx, []store.Key{k}); err != nil || len(got) != 0 {
		t.Fatalf("batch get of an expired cached item: %v, %v", got, err)
	}
}

func TestAPendingKeyIsNeitherAnsweredNorFilled(t *testing.T) {
	c := newCache(1 << 20)
	k := string(encodeKey(store.Key{PK: "p", SK: "a"}))
	it := store.Item{"pk": "p", "sk": "a"}
	_, _, v := c.lookup([]byte(k), 0)
	c.fill([]byte(k), newEntry(it, "p|a", 10), v)
	c.begin([]string{k})
	if _, ok, _ := c.lookup([]byte(k), 0); ok {
		t.Fatal("a pending key was answered")
	}
	_, _, v = c.lookup([]byte(k), 0)
	c.fill([]byte(k), newEntry(store.Item{"pk": "p", "sk": "a", "n": int64(2)}, "p|a", 20), v)
	if c.entries[k].size != 10 {
		t.Fatal("a pending key was filled")
	}
	c.end([]string{k})
	if _, ok := c.entries[k]; ok || len(c.pending) != 0 {
		t.Fatalf("after the write ended: entry %v, pending %v", ok, c.pending)
	}
}

func TestAFillThatAWriteOvertookIsNotInserted(t *testing.T) {
	c := newCache(1 << 20)
	k := string(encodeKey(store.Key{PK: "p", SK: "a"}))
	_, _, v := c.lookup([]byte(k), 0) // the fill takes the version, then reads bbolt
	c.begin([]string{k})              // a write begins and commits meanwhile
	c.end([]string{k})
	c.fill([]byte(k), newEntry(store.Item{"pk": "p", "sk": "a"}, "p|a", 10), v) // the read's item is older than the write
	if _, ok := c.entries[k]; ok {
		t.Fatal("an item read before a write was inserted after it")
	}
}

func TestTheReadCacheStaysWithinItsBudget(t *testing.T) {
	ctx := context.Background()
	const budget = 4 << 10
	s := openInternal(t, WithCacheBytes(budget))
	for i := range 100 {
		k := store.Key{PK: "p", SK: fmt.Sprintf("k%03d", i)}
		if err := s.Put(ctx, store.Item{"pk": k.PK, "sk": k.SK, "doc": []byte(strings.Repeat("x", 200))}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, k); err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, e := range s.cache.entries {
			sum += e.size
		}
		if sum != s.cache.bytes || sum > budget {
			t.Fatalf("after %d reads the cache holds %d bytes (counted %d); budget %d", i+1, sum, s.cache.bytes, budget)
		}
	}
	if n := len(s.cache.entries); n == 0 || n >= 100 {
		t.Fatalf("the cache holds %d entries", n)
	}
}

// Each writer adds to one counter and then publishes the value its Update
// answered; a read that begins after a value was published must see at
// least that value, and each reader's values never go down. Run with -race.
func TestReadersNeverSeeAnOlderValueAfterANewerOne(t *testing.T) {
	ctx := context.Background()
	s := openInternal(t, WithoutSync())
	k := store.Key{PK: "p", SK: "counter"}
	other := store.Key{PK: "p", SK: "other"}
	if err := s.Put(ctx, store.Item{"pk": k.PK, "sk": k.SK, "n": int64(0)}); err != nil {
		t.Fatal(err)
	}
	const writers, readers, writes = 2, 4, 300
	var published atomic.Int64
	var wg sync.WaitGroup
	var done atomic.Bool
	errs := make(chan error, writers+readers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range writes {
				it, err := s.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}})
				if err != nil {
					errs <- err
					return
				}
				for n := it.Int("n"); ; {
					p := published.Load()
					if p >= n || published.CompareAndSwap(p, n) {
						break
					}
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			last := int64(0)
			for !done.Load() {
				floor := published.Load()
				var n int64
				if r%2 == 0 {
					it, err := s.Get(ctx, k)
					if err != nil {
						errs <- err
						return
					}
					n = it.Int("n")
				} else {
					got, err := s.BatchGet(ctx, []store.Key{other, k})
					if err != nil {
						errs <- err
						return
					}
					n = got[k.String()].Int("n")
				}
				if n < floor || n < last {
					errs <- fmt.Errorf("reader %d saw %d after %d was published and %d was read", r, n, floor, last)
					return
				}
				last = n
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, k); err != nil || got.Int("n") != writers*writes {
		t.Fatalf("final counter %v, %v", got, err)
	}
}

// BenchmarkBatchGet reads what authentication reads, a key's copy, two
// ancestors and the account, from the cache (Hit) and from bbolt (Miss).
func BenchmarkBatchGet(b *testing.B) {
	for _, bc := range []struct {
		name  string
		bytes int
	}{{"Hit", defaultCacheBytes}, {"Miss", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			s := openInternal(b, WithCacheBytes(bc.bytes))
			var keys []store.Key
			for i := range 4 {
				k := store.Key{PK: fmt.Sprintf("key#%026d#3", i), SK: "key"}
				keys = append(keys, k)
				it := store.Item{"pk": k.PK, "sk": k.SK, "doc": []byte(strings.Repeat("d", 900)), "lastUsedAt": int64(1e12), "status": "active"}
				if err := s.Put(ctx, it); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.BatchGet(ctx, keys); err != nil { // fills the cache
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				got, err := s.BatchGet(ctx, keys)
				if err != nil || len(got) != 4 {
					b.Fatal(got, err)
				}
			}
		})
	}
}

func TestASharedReadIsSeenThroughByTheNextWrite(t *testing.T) {
	ctx := context.Background()
	s := openInternal(t)
	k := store.Key{PK: "p", SK: "a"}
	for n := range int64(3) {
		if err := s.Put(ctx, store.Item{"pk": "p", "sk": "a", "n": n, "doc": []byte("d")}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := s.BatchGetShared(ctx, []store.Key{k})
			if err != nil || got[k.String()].Int("n") != n {
				t.Fatalf("shared read after write %d: %v, %v", n, got, err)
			}
		}
	}
}

func TestTheSweepDropsTheCachedItemsItDeletes(t *testing.T) {
	s, k, now := cachedExpiringItem(t)
	now.Add(10)
	s.sweep()
	if cached(s, k) {
		t.Fatal("the sweep deleted an item the cache still holds")
	}
}

// cachedExpiringItem is a store on a clock the test moves, holding an item
// that expires in 10 s, read once so that the cache holds it.
func cachedExpiringItem(t *testing.T) (*Store, store.Key, *atomic.Int64) {
	t.Helper()
	now := new(atomic.Int64)
	now.Store(time.Now().Unix())
	s := openInternal(t, WithClock(func() time.Time { return time.Unix(now.Load(), 0) }))
	k := store.Key{PK: "p", SK: "a"}
	if err := s.Put(context.Background(), store.Item{"pk": "p", "sk": "a", store.AttrExpiresAt: now.Load() + 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), k); err != nil || !cached(s, k) {
		t.Fatalf("not cached: %v", err)
	}
	return s, k, now
}

// A cached entry keeps its item's name, which BatchGet answers on a hit
// instead of making it again: the name must be the key's String, whether
// the batch read bbolt or the cache, shared or copied.
func TestABatchNamesItsItemsByTheirKeysFromBboltAndFromTheCache(t *testing.T) {
	ctx := context.Background()
	s := openInternal(t)
	keys := []store.Key{{PK: "acct#1", SK: "key#a"}, {PK: "acct#1|x", SK: "b"}, {PK: "k", SK: "|"}}
	for _, k := range keys {
		if err := s.Put(ctx, store.Item{"pk": k.PK, "sk": k.SK}); err != nil {
			t.Fatal(err)
		}
	}
	for round, read := range []func(context.Context, []store.Key) (map[string]store.Item, error){
		s.BatchGet, s.BatchGet, s.BatchGetShared,
	} {
		got, err := read(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(keys) {
			t.Fatalf("round %d: %d items, want %d", round, len(got), len(keys))
		}
		for _, k := range keys {
			if it := got[k.String()]; it == nil || it.Key() != k {
				t.Fatalf("round %d: %s named %v", round, k, got)
			}
		}
		for _, k := range keys {
			if !cached(s, k) {
				t.Fatalf("round %d: %s not cached", round, k)
			}
		}
	}
}
