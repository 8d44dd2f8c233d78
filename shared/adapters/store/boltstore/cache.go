package boltstore

import (
	"hash/maphash"
	"maps"
	"sync"

	"platformapi/shared/adapters/store"
)

// cache holds decoded items for point reads (Get, BatchGet), keyed by their
// encoded key. Authentication reads a key's copy, its ancestors and its
// account on every request; from bbolt that is a read transaction, a seek
// per key and a decode per item, from here a map lookup and a copy
// (docs/storage-design.md, "The embedded read cache").
//
// It is exact because this process holds bbolt's file lock, so every write
// passes through this Store, and because of the order of events:
//   - a write marks its keys pending before its bbolt commit; a pending key
//     is never answered from the cache nor filled into it;
//   - after the commit (or the rollback) the write drops the keys' entries,
//     bumps their versions and ends their pendency;
//   - a fill reads its key's version before its bbolt read and inserts only
//     if the version is unchanged and the key is not pending, so an item
//     read before a write committed is never inserted after it.
//
// Versions are striped (a key shares its version with the keys of the same
// stripe): a write to one key then refuses the fills of a few others, never
// anything worse. Pendency is exact, so a long commit (the audit flusher's
// fsync) does not stop hits on the keys it is not writing.
type cache struct {
	mu       sync.RWMutex
	entries  map[string]entry
	pending  map[string]int
	versions [cacheStripes]uint64
	seed     maphash.Seed
	bytes    int // sum of the entries' sizes
	maxBytes int
}

// entry is a cached item with what its copies need: the names of its
// []byte attributes and their total length, so a copy does not look for them.
type entry struct {
	it store.Item
	// name is the item's key as BatchGet names it (store.Key.String),
	// made once when the entry is filled rather than on every hit.
	name  string
	size  int
	blobs []string
	n     int
}

func newEntry(it store.Item, name string, size int) entry {
	e := entry{it: it, name: name, size: size}
	for name, v := range it {
		if b, ok := v.([]byte); ok {
			e.blobs = append(e.blobs, name)
			e.n += len(b)
		}
	}
	return e
}

// clone is a copy of the entry's item for a caller, who may change it: a
// new map and one new buffer for all its []byte values (strings cannot
// change).
func (e entry) clone() store.Item {
	out := maps.Clone(e.it)
	if len(e.blobs) == 0 {
		return out
	}
	buf := make([]byte, 0, e.n)
	for _, name := range e.blobs {
		start := len(buf)
		buf = append(buf, e.it[name].([]byte)...)
		out[name] = buf[start:len(buf):len(buf)]
	}
	return out
}

const cacheStripes = 1 << 12

// defaultCacheBytes bounds the cache: a key record is about a kilobyte, so
// this holds thousands of keys, far more than the chains of the requests
// a process serves at once.
const defaultCacheBytes = 8 << 20

// maxCachedItem keeps one large item from taking a large part of the budget.
const maxCachedItem = 64 << 10

func newCache(maxBytes int) *cache {
	return &cache{entries: map[string]entry{}, pending: map[string]int{}, seed: maphash.MakeSeed(), maxBytes: maxBytes}
}

func (c *cache) stripe(k string) int {
	return int(maphash.String(c.seed, k) % cacheStripes)
}

// lookup answers k's item if the cache holds it, k is not pending and the
// item is live at now; otherwise it returns k's version, for fill. The
// caller holds c.mu for reading, and hands out a clone of the item: an
// entry is never changed, only replaced or dropped.
func (c *cache) lookup(k []byte, now int64) (entry, bool, uint64) {
	if c.pending[string(k)] == 0 {
		if e, ok := c.entries[string(k)]; ok && !e.it.Expired(now) {
			return e, true, 0
		}
	}
	return entry{}, false, c.versions[c.stripe(string(k))]
}

// fill inserts e (read from bbolt after version was taken) unless a write
// to its key began or ended since, and reports whether it did.
func (c *cache) fill(k []byte, e entry, version uint64) bool {
	size := e.size
	if size > maxCachedItem || size > c.maxBytes {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[string(k)] != 0 || c.versions[c.stripe(string(k))] != version {
		return false
	}
	if old, ok := c.entries[string(k)]; ok {
		c.bytes -= old.size
	}
	// A full cache forgets arbitrary entries (map order is random): the hot
	// keys come straight back, and nothing needs an order kept per hit.
	for c.bytes+size > c.maxBytes {
		for victim, e := range c.entries {
			delete(c.entries, victim)
			c.bytes -= e.size
			break
		}
	}
	c.entries[string(k)] = e
	c.bytes += size
	return true
}

// begin marks keys pending; the write's commit comes after.
func (c *cache) begin(keys []string) {
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.pending[k]++
	}
}

// end drops keys' entries, bumps their versions and ends their pendency,
// once their write has committed or rolled back.
func (c *cache) end(keys []string) {
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if e, ok := c.entries[k]; ok {
			delete(c.entries, k)
			c.bytes -= e.size
		}
		c.versions[c.stripe(k)]++
		if c.pending[k]--; c.pending[k] == 0 {
			delete(c.pending, k)
		}
	}
}
