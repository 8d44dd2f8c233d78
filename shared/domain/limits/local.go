package limits

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// local keeps request-rate windows and concurrency leases in this process's
// memory, for a process that serves its storage alone (the embedded server:
// its store's file lock keeps a second process out). It counts exactly as
// the store does, all or nothing under the locks of every counter a request
// moves, at a fraction of a bbolt transaction's cost.
//
// Nothing survives a restart: the current minute's windows start again from
// zero, which lets at most one more minute's worth of requests through once
// per restart, and the leases of requests that died with the process are
// gone, as they should be. The state is pruned as time passes: a window is
// dropped once its minute is two minutes old, a lease once it has expired.
type local struct {
	seed   maphash.Seed
	shards [localShards]localShard
	tokens atomic.Uint64
}

// localShards spreads counters over independent locks; a power of two.
const localShards = 64

type localShard struct {
	mu      sync.Mutex
	windows map[windowKey]int64
	leases  map[counterKey][]localLease
	pruned  int64 // the minute of the last sweep of windows
}

type counterKey struct{ owner, selector string }

type windowKey struct {
	counterKey
	minute int64
}

type localLease struct {
	token   uint64
	expires time.Time
}

// localHold is one lease slot an admitted request holds, for its release.
type localHold struct {
	shard *localShard
	key   counterKey
}

func newLocal() *local {
	l := &local{seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].windows = map[windowKey]int64{}
		l.shards[i].leases = map[counterKey][]localLease{}
	}
	return l
}

func (l *local) shardOf(k counterKey) int {
	var h maphash.Hash
	h.SetSeed(l.seed)
	h.WriteString(k.owner)
	h.WriteByte(0)
	h.WriteString(k.selector)
	return int(h.Sum64() & (localShards - 1))
}

// admit is Counter.Admit in memory: every requestsPerMinute window of
// checks moves by one and a lease of every maxConcurrent limit is taken, or,
// when one is exhausted, nothing moves. The shards involved are locked in
// index order, so concurrent admissions cannot deadlock.
func (l *local) admit(checks []check, lease *Lease, now time.Time, leaseTTL time.Duration) error {
	minute := now.Unix() / 60 * 60
	// The request's keys, shards and lock order fit these arrays: no
	// allocation.
	var keyBuf [8]counterKey
	var idxBuf, orderBuf [8]int
	keys, idx := keyBuf[:0], idxBuf[:0]
	for _, ch := range checks {
		k := counterKey{ch.owner, ch.selector}
		keys, idx = append(keys, k), append(idx, l.shardOf(k))
	}
	order := append(orderBuf[:0], idx...)
	slices.Sort(order)
	order = slices.Compact(order)
	for _, i := range order {
		l.shards[i].mu.Lock()
		l.shards[i].sweep(minute)
	}
	defer func() {
		for _, i := range order {
			l.shards[i].mu.Unlock()
		}
	}()
	// Refusal first, in the store's order (every window, then every
	// lease), so that a refused request moves nothing.
	for i, ch := range checks {
		if ch.limit.RequestsPerMinute == nil {
			continue
		}
		if l.shards[idx[i]].windows[windowKey{keys[i], minute}] >= *ch.limit.RequestsPerMinute {
			return &ExceededError{Selector: ch.selector, Kind: "requestsPerMinute", RetryAfterSeconds: retryAfter(now, time.Unix(minute+60, 0))}
		}
	}
	for i, ch := range checks {
		if ch.limit.MaxConcurrent == nil {
			continue
		}
		if int64(len(l.shards[idx[i]].liveLeases(keys[i], now))) >= *ch.limit.MaxConcurrent {
			return &ExceededError{Selector: ch.selector, Kind: "maxConcurrent", RetryAfterSeconds: 1}
		}
	}
	lease.localToken = l.tokens.Add(1)
	for i, ch := range checks {
		s := &l.shards[idx[i]]
		if ch.limit.RequestsPerMinute != nil {
			s.windows[windowKey{keys[i], minute}]++
		}
		if ch.limit.MaxConcurrent != nil {
			s.leases[keys[i]] = append(s.leases[keys[i]], localLease{token: lease.localToken, expires: now.Add(leaseTTL)})
			lease.local = append(lease.local, localHold{shard: s, key: keys[i]})
		}
	}
	return nil
}

// sweep drops the shard's windows that are two minutes old, once a minute.
// The caller holds s.mu.
func (s *localShard) sweep(minute int64) {
	if s.pruned == minute {
		return
	}
	s.pruned = minute
	for k := range s.windows {
		if k.minute < minute-60 {
			delete(s.windows, k)
		}
	}
}

// liveLeases drops the expired leases of k, whose requests outlived the
// lease's time to live (as a store lease item expires), and returns the
// rest. The caller holds s.mu.
func (s *localShard) liveLeases(k counterKey, now time.Time) []localLease {
	live := slices.DeleteFunc(s.leases[k], func(h localLease) bool { return !now.Before(h.expires) })
	if len(live) == 0 {
		delete(s.leases, k)
	} else {
		s.leases[k] = live
	}
	return live
}

// release frees the lease's slots; one that expired meanwhile (and may have
// been taken by another request) is no longer there to free.
func (l *local) release(lease *Lease) {
	for _, h := range lease.local {
		h.shard.mu.Lock()
		held := slices.DeleteFunc(h.shard.leases[h.key], func(x localLease) bool { return x.token == lease.localToken })
		if len(held) == 0 {
			delete(h.shard.leases, h.key)
		} else {
			h.shard.leases[h.key] = held
		}
		h.shard.mu.Unlock()
	}
	lease.local = nil
}
