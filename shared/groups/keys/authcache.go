package keys

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/accounts"
)

// authCache holds what authentication would otherwise rebuild on every
// request from a store that shares its cached items (store.SharedReader): the
// decoded key of each item it was handed, and the names of the items a
// chain reads. Both are exact:
//
//   - a decoded key is answered only for the very item instance it was
//     decoded from. The embedded store never changes an item it has cached:
//     every write replaces the item by a new map (and a reload from disk is
//     a new map too), so the same map means the same attributes, revokedAt
//     and lastUsedAt included, and decode is a function of the attributes.
//     The entry holds the item itself, so its map cannot be freed and its
//     address reused by another item while the entry exists.
//   - a plan is pure naming (ids to store keys and their strings), stored
//     only for a chain that authenticated, and answered only to a secret
//     naming the same account and ancestors.
//
// A decoded key handed out here is shared by every request that reads the
// same item: nothing may write to it (docs/keys.md, "Authentication"). It
// is bounded: a full map forgets an arbitrary entry for each new one.
type authCache struct {
	mu    sync.RWMutex
	max   int
	keys  map[string]decodedItem // by the item's name (store.Key.String)
	plans map[string]*plan       // by key id
}

// authCached serves every Repo of the process, as decode's cache does: an
// entry answers only for its own item instance, whichever store holds it.
var authCached = newAuthCache(authCacheSize)

// authCacheSize bounds each map: thousands of keys, far more than the
// chains a process serves at once.
const authCacheSize = 4096

func newAuthCache(max int) *authCache {
	return &authCache{max: max, keys: map[string]decodedItem{}, plans: map[string]*plan{}}
}

type decodedItem struct {
	it store.Item
	k  *Key
}

// sameItem reports whether a and b are one map instance (not merely equal
// contents). Go cannot compare maps with ==; a map value is a pointer to
// its runtime header, which reflect exposes without unsafe.
func sameItem(a, b store.Item) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// key returns the key decoded from it (named name), decoding it on a miss.
func (c *authCache) key(name string, it store.Item) (*Key, error) {
	c.mu.RLock()
	e, ok := c.keys[name]
	c.mu.RUnlock()
	if ok && sameItem(e.it, it) {
		return e.k, nil
	}
	k, err := decode(it)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.keys[name]; !ok {
		evictOne(c.keys, c.max)
	}
	c.keys[name] = decodedItem{it: it, k: k}
	return k, nil
}

// plan is the items one chain reads: want[t] reads copy (t+i)%Replicas of
// ids[i] (the key first, then its ancestors), then the account; names[t]
// are their names, how a batch answers them. A request takes the plan of
// its turn, so copies are read in turn exactly as without the cache.
type plan struct {
	accountID string
	ancestors []string
	want      [Replicas][]store.Key
	names     [Replicas][]string
}

func newPlan(h Hint) *plan {
	// The ids are substrings of the secret: the plan keeps copies, so it
	// never holds the secret in memory.
	p := &plan{accountID: strings.Clone(h.AccountID)}
	for _, a := range h.Ancestors {
		p.ancestors = append(p.ancestors, strings.Clone(a))
	}
	n := 1 + len(h.Ancestors)
	acct := accounts.Key(h.AccountID)
	acctName := acct.String()
	for t := range Replicas {
		want := make([]store.Key, n+1)
		names := make([]string, n+1)
		for i := range n {
			id := h.KeyID
			if i > 0 {
				id = h.Ancestors[i-1]
			}
			want[i] = replicaKey(id, (t+i)%Replicas)
			names[i] = want[i].String()
		}
		want[n], names[n] = acct, acctName
		p.want[t], p.names[t] = want, names
	}
	return p
}

// plan returns the plan of the chain h names: the cached one when it names
// the same account and ancestors, else a new one, cached by keep once its
// chain has authenticated.
func (c *authCache) plan(h Hint) (p *plan, cached bool) {
	c.mu.RLock()
	p, ok := c.plans[h.KeyID]
	c.mu.RUnlock()
	if ok && p.accountID == h.AccountID && slices.Equal(p.ancestors, h.Ancestors) {
		return p, true
	}
	return newPlan(h), false
}

// keep caches the plan of key id, whose chain has just authenticated.
func (c *authCache) keep(id string, p *plan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.plans[id]; !ok {
		evictOne(c.plans, c.max)
	}
	c.plans[strings.Clone(id)] = p
}

// evictOne makes room for one new entry in a map bounded by max; the
// caller holds the lock.
func evictOne[V any](m map[string]V, max int) {
	for old := range m {
		if len(m) < max {
			return
		}
		delete(m, old)
	}
}
