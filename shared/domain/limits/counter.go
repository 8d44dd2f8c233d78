package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
)

// Owner is one key of a chain with its own limits.
type Owner struct {
	ID     string
	Limits Set
}

// ExceededError names the exhausted limit.
type ExceededError struct {
	Selector          string
	Kind              string // requestsPerMinute, maxConcurrent or creditsPerDay
	RetryAfterSeconds int
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("limits: %s of %s exhausted", e.Kind, e.Selector)
}

// Counter counts requests on the item store. Every window is its own item,
// keyed by the window's start, so correctness never depends on TTL deletion:
// expiry only tidies up.
type Counter struct {
	st       store.Store // credits per day: must survive anything the ledger survives
	requests store.Store // request windows and leases: minutes-long state
	local    *local      // when set, request windows and leases instead
	now      func() time.Time
	leaseTTL time.Duration
	minute   minuteState
	// turn picks the shard a request counts on: in turn from a random
	// start, so one process spreads a hot window evenly over its shards
	// (random picks would leave some shards busier), and processes do not
	// move in step.
	turn   atomic.Uint64
	fences fences
	// held is the lease of a request that holds no slot, which every such
	// request shares: its Release does nothing and nothing changes it.
	held *Lease
}

// Sharded request windows. DynamoDB writes one item at most 1,000 units a
// second, and a window's increment is at least one unit (two when it goes
// out in a transaction), so one window item would cap a limited key at 500
// to 1,000 requests a second whatever its limit. A window of N requests is spread
// over windowShards(N) items in their own partitions, each admitting its
// share (the shares sum to N, so the limit is never exceeded). A request
// counts on the next shard in turn; a shard that refuses is full until the
// window ends (a count only grows), so the request tries the others, and the
// process remembers the full shards and refuses without a write once all
// are: a window never admits more than N (see docs/limits.md), and a key
// hammered past its limit costs each process at most two refused writes
// per shard and minute (a batch, then the request alone).
const (
	maxWindowShards = 32
	// windowShareCap is the largest share before a window is split: a
	// shard's admitted writes in any second stay within DynamoDB's 1,000
	// units for limits up to maxWindowShards × windowShareCap a minute.
	windowShareCap = 500
)

// windowShards is how many items a window of n requests is spread over.
func windowShards(n int64) int64 {
	return min(maxWindowShards, max(1, (n+windowShareCap-1)/windowShareCap))
}

// windowShare is shard's part of a window of n over shards items.
func windowShare(n, shards, shard int64) int64 {
	s := n / shards
	if shard < n%shards {
		s++
	}
	return s
}

// shardKey is one shard's item of a window starting at minute. A window
// of one shard keeps the unsharded key.
func shardKey(owner, selector string, shard, shards, minute int64) store.Key {
	pk := counterPK(owner, selector)
	if shards > 1 {
		pk += "#" + strconv.FormatInt(shard, 10)
	}
	return store.Key{PK: pk, SK: "rpm#" + strconv.FormatInt(minute, 10)}
}

// Batched window tokens. A counted request costs a write, so a busy process
// counts several requests at once: it adds a
// batch of tokens to the window in one write and admits the next requests
// from them without writing. The window still never admits more than its
// limit (every token was counted under the same condition); a token a
// process holds when the minute ends, or when it dies, is never used, so a
// window admits less by at most what its processes held (docs/limits.md).
// The batch is the process's own rate on that window over batchSpan, so the
// unused tail is about batchSpan of each process's traffic, and at most
// 1/batchShareDivisor of a shard's share, so a small limit (a share under
// twice that divisor) counts every request on its own and stays exact.
const (
	batchSpan         = 100 * time.Millisecond
	batchShareDivisor = 32
	maxBatch          = 64
)

// window names one owner's limit of one selector.
type window struct{ owner, selector string }

// held is what this process knows of one window in the current minute.
type held struct {
	tokens   int64     // counted on the store, not yet used
	admitted int64     // requests this process admitted on the window
	first    time.Time // when it admitted the first of them
}

// minuteState is this process's view of the current minute's windows: the
// shards it saw refuse, those it counts on in transactions, the fences it
// set, and the tokens it holds. All end with the minute.
type minuteState struct {
	mu      sync.Mutex
	minute  int64
	full    map[store.Key]bool
	crowded map[store.Key]bool
	fenced  map[fenceAt]bool
	held    map[window]*held
}

// fenceAt is one fence attribute on one window item.
type fenceAt struct {
	key  store.Key
	attr string
}

// at resets the state when minute is a new one; callers hold mu.
func (m *minuteState) at(minute int64) {
	if m.minute != minute || m.full == nil {
		m.minute, m.full, m.crowded, m.held = minute, map[store.Key]bool{}, map[store.Key]bool{}, map[window]*held{}
		m.fenced = map[fenceAt]bool{}
	}
}

func (m *minuteState) isCrowded(minute int64, k store.Key) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	return m.crowded[k]
}

func (m *minuteState) markCrowded(minute int64, k store.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	m.crowded[k] = true
}

// hasFence reports whether attr is a fence this process already set on k.
func (m *minuteState) hasFence(minute int64, k store.Key, attr string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	return m.fenced[fenceAt{k, attr}]
}

func (m *minuteState) markFence(minute int64, k store.Key, attr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	m.fenced[fenceAt{k, attr}] = true
}

func (m *minuteState) isFull(minute int64, k store.Key) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	return m.full[k]
}

func (m *minuteState) markFull(minute int64, k store.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	m.full[k] = true
}

// take uses one held token of w, if any.
func (m *minuteState) take(minute int64, w window) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	if h := m.held[w]; h != nil && h.tokens > 0 {
		h.tokens--
		return true
	}
	return false
}

// putBack returns a token taken for a request that was then refused.
func (m *minuteState) putBack(minute int64, w window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.held[w]; m.minute == minute && h != nil {
		h.tokens++
	}
}

// admitted records a request admitted on w at now, and the extra tokens
// its write counted beside its own.
func (m *minuteState) admitted(minute int64, w window, now time.Time, extra int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	h := m.held[w]
	if h == nil {
		h = &held{first: now}
		m.held[w] = h
	}
	h.admitted++
	h.tokens += extra
}

// batch is how many tokens the next write on w counts: this process's rate
// on w over batchSpan, within a shard's share / batchShareDivisor.
func (m *minuteState) batch(minute int64, w window, now time.Time, share int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at(minute)
	h := m.held[w]
	if h == nil {
		return 1
	}
	perSecond := float64(h.admitted) / max(now.Sub(h.first).Seconds(), 1)
	b := int64(math.Ceil(perSecond * batchSpan.Seconds()))
	return max(1, min(b, maxBatch, share/batchShareDivisor))
}

// unused is the tokens this process holds, counted and not yet used.
func (m *minuteState) unused() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, h := range m.held {
		n += h.tokens
	}
	return n
}

// NewCounter builds a counter; leaseTTL bounds how long a dead process's
// concurrency lease can hold its slot (the request deadline plus a margin).
func NewCounter(st store.Store, now func() time.Time, leaseTTL time.Duration) *Counter {
	c := &Counter{st: st, requests: st, now: now, leaseTTL: leaseTTL, fences: fences{id: newFenceID()}}
	c.held = &Lease{c: c}
	c.turn.Store(mrand.Uint64())
	return c
}

// WithLocalRequests keeps request windows and concurrency leases in this
// process's memory, counted exactly as on the store but without a storage
// write per request. Only for a process that serves its storage alone (the
// embedded server): another process would not see its counts. Windows start
// again from zero when the process restarts (see local).
func (c *Counter) WithLocalRequests() *Counter {
	c.local = newLocal()
	return c
}

type check struct {
	owner, selector string
	limit           Limit
}

// matching appends to out every (owner, selector) limit that applies to a
// request whose operation selectors are ops.
func matching(out []check, chain []Owner, ops []string) []check {
	for _, o := range chain {
		for sel, l := range o.Limits {
			if Covers(sel, ops) {
				out = append(out, check{owner: o.ID, selector: sel, limit: l})
			}
		}
	}
	return out
}

func counterPK(owner, selector string) string { return "lim#" + owner + "#" + selector }

// Lease is an admitted request's hold on its concurrency slots.
type Lease struct {
	c     *Counter
	slots []store.Key
	token string
	// local and localToken are the slots held in memory (WithLocalRequests).
	local      []localHold
	localToken uint64
}

// Release frees the request's slots. Only slots still held by this lease are
// freed: one that expired and was taken over is left alone.
func (l *Lease) Release(ctx context.Context) error {
	if l != nil && len(l.local) > 0 {
		l.c.local.release(l)
		return nil
	}
	if l == nil || len(l.slots) == 0 {
		return nil
	}
	ops := make([]store.Op, len(l.slots))
	for i, k := range l.slots {
		ops[i] = store.DeleteOp(k, store.AttrEquals("token", l.token))
	}
	err := l.c.requests.Transact(ctx, ops)
	if errors.Is(err, store.ErrConditionFailed) {
		for _, k := range l.slots {
			_ = l.c.requests.Delete(ctx, k, store.AttrEquals("token", l.token))
		}
		return nil
	}
	return err
}

// Admit counts one request against every matching requestsPerMinute limit
// and takes a slot of every matching maxConcurrent limit, all in one
// transaction: either every counter moves or none does, so a refused request
// consumes nothing and exactly N requests are admitted per window. Matching
// limits with neither field (creditsPerDay alone) admit without a write.
func (c *Counter) Admit(ctx context.Context, chain []Owner, ops []string) (*Lease, error) {
	// A request's checks fit the array (a limit or two per key of the
	// chain): no allocation.
	var buf [8]check
	checks := matching(buf[:0], chain, ops)
	if len(checks) == 0 {
		return c.held, nil
	}
	now := c.now()
	if c.local != nil {
		lease := Lease{c: c}
		if err := c.local.admit(checks, &lease, now, c.leaseTTL); err != nil {
			return nil, err
		}
		if len(lease.local) == 0 {
			return c.held, nil // windows only: nothing to release
		}
		holding := lease
		return &holding, nil
	}
	lease := &Lease{c: c, token: newToken()}
	minute := now.Unix() / 60 * 60
	type windowState struct {
		check
		id     window
		shards int64
		open   []int64 // shards not known to be full, the next in turn first
		batch  int64   // tokens the write counts
	}
	type slotState struct {
		check
		start, tried int64
	}
	var windows []*windowState
	var fromHeld []window // windows this request took a held token of
	var slots []*slotState
	refuse := func(err error) (*Lease, error) {
		for _, w := range fromHeld {
			c.minute.putBack(minute, w)
		}
		return nil, err
	}
	for _, ch := range checks {
		if n := ch.limit.RequestsPerMinute; n != nil {
			id := window{ch.owner, ch.selector}
			if c.minute.take(minute, id) {
				fromHeld = append(fromHeld, id)
				continue
			}
			w := &windowState{check: ch, id: id, shards: windowShards(*n)}
			w.batch = c.minute.batch(minute, id, now, *n/w.shards)
			first := int64(c.turn.Add(1) % uint64(w.shards))
			for i := range w.shards {
				s := (first + i) % w.shards
				if !c.minute.isFull(minute, shardKey(ch.owner, ch.selector, s, w.shards, minute)) {
					w.open = append(w.open, s)
				}
			}
			if len(w.open) == 0 {
				return refuse(windowExceeded(ch, now, minute))
			}
			windows = append(windows, w)
		}
		if ch.limit.MaxConcurrent != nil {
			k := *ch.limit.MaxConcurrent
			slots = append(slots, &slotState{check: ch, start: mrand.Int64N(k)})
		}
	}
	admitted := func() (*Lease, error) {
		for _, w := range fromHeld {
			c.minute.admitted(minute, w, now, 0)
		}
		for _, w := range windows {
			c.minute.admitted(minute, w.id, now, w.batch-1)
		}
		return lease, nil
	}
	for {
		var txOps []store.Op
		for _, w := range windows {
			shard := w.open[0]
			k := shardKey(w.owner, w.selector, shard, w.shards, minute)
			txOps = append(txOps, store.UpdateOp(k, store.Update{
				Add: map[string]int64{"count": w.batch},
				Set: map[string]any{store.AttrExpiresAt: minute + 120},
			}, store.NumBelow("count", windowShare(*w.limit.RequestsPerMinute, w.shards, shard)-w.batch+1)))
		}
		lease.slots = lease.slots[:0]
		for _, sl := range slots {
			n := *sl.limit.MaxConcurrent
			idx := (sl.start + sl.tried) % n
			k := store.Key{PK: counterPK(sl.owner, sl.selector), SK: "lease#" + strconv.FormatInt(idx, 10)}
			it := store.NewItem(k)
			it["token"] = lease.token
			it[store.AttrExpiresAt] = now.Add(c.leaseTTL).Unix()
			txOps = append(txOps, store.PutOp(it, store.NotExists()))
			lease.slots = append(lease.slots, k)
		}
		if len(txOps) == 0 {
			// Held tokens, or only creditsPerDay limits (counted by
			// ReserveCredits), admit without a write.
			return admitted()
		}
		var err error
		if len(txOps) == 1 && len(windows) == 1 && !c.minute.isCrowded(minute, txOps[0].Key) {
			var added bool
			if added, err = c.countAlone(ctx, minute, txOps[0]); added && errors.Is(err, store.ErrConditionFailed) {
				// Full, or crowded with fences: the request alone in a
				// transaction tells, and is the second refused write of
				// a full shard.
				c.minute.markCrowded(minute, txOps[0].Key)
				windows[0].batch = 1
				continue
			}
		} else {
			err = c.requests.Transact(ctx, txOps)
		}
		if err == nil {
			return admitted()
		}
		var tx *store.TxError
		if !errors.As(err, &tx) {
			return refuse(fmt.Errorf("limits: admit: %w", err))
		}
		if tx.Index < len(windows) {
			w := windows[tx.Index]
			if w.batch > 1 {
				// The shard may still have room for fewer: count this
				// request alone.
				w.batch = 1
				continue
			}
			// The shard is full until the window ends: try the others.
			c.minute.markFull(minute, txOps[tx.Index].Key)
			w.open = w.open[1:]
			if len(w.open) == 0 {
				return refuse(windowExceeded(w.check, now, minute))
			}
			continue
		}
		// A taken slot may be taken by this very request: a write applied
		// whose answer was lost, then failed on the SDK's retry. The slot
		// then holds our token, and everything else of the transaction was
		// applied with it.
		if it, gerr := c.requests.Get(ctx, txOps[tx.Index].Key); gerr == nil && it.String("token") == lease.token {
			return admitted()
		}
		// A taken slot: try the next one of that limit until all were tried.
		sl := slots[tx.Index-len(windows)]
		sl.tried++
		if sl.tried >= *sl.limit.MaxConcurrent {
			return refuse(&ExceededError{Selector: sl.selector, Kind: "maxConcurrent", RetryAfterSeconds: 1})
		}
	}
}

// windowExceeded is the refusal of a full requestsPerMinute window.
func windowExceeded(ch check, now time.Time, minute int64) error {
	return &ExceededError{Selector: ch.selector, Kind: "requestsPerMinute", RetryAfterSeconds: retryAfter(now, time.Unix(minute+60, 0))}
}

// retryAfter is whole seconds until t, at least 1.
func retryAfter(now, t time.Time) int {
	return max(1, int(math.Ceil(t.Sub(now).Seconds())))
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Reservation is credits held against creditsPerDay limits for one
// operation, settled to the exact charge or released.
type Reservation struct {
	c      *Counter
	keys   []store.Key
	amount int64
}

// ReserveCredits holds amountMicro against every matching creditsPerDay limit
// (UTC day) of the chain, all or none.
func (c *Counter) ReserveCredits(ctx context.Context, chain []Owner, ops []string, amountMicro int64) (*Reservation, error) {
	now := c.now().UTC()
	day := now.Format("20060102")
	res := &Reservation{c: c, amount: amountMicro}
	var txOps []store.Op
	var what []check
	for _, ch := range matching(nil, chain, ops) {
		if ch.limit.CreditsPerDay == nil {
			continue
		}
		capMicro := int64(math.Round(*ch.limit.CreditsPerDay * 1_000_000))
		k := store.Key{PK: counterPK(ch.owner, ch.selector), SK: "cpd#" + day}
		txOps = append(txOps, store.UpdateOp(k, store.Update{
			Add: map[string]int64{"spent": amountMicro},
			Set: map[string]any{store.AttrExpiresAt: now.Add(48 * time.Hour).Unix()},
		}, store.NumBelow("spent", capMicro-amountMicro+1)))
		what = append(what, ch)
		res.keys = append(res.keys, k)
	}
	if len(txOps) == 0 {
		return res, nil
	}
	err := c.st.Transact(ctx, txOps)
	var tx *store.TxError
	if errors.As(err, &tx) {
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		return nil, &ExceededError{Selector: what[tx.Index].selector, Kind: "creditsPerDay", RetryAfterSeconds: retryAfter(now, midnight)}
	}
	if err != nil {
		return nil, fmt.Errorf("limits: reserve credits: %w", err)
	}
	return res, nil
}

// Settle adjusts the reservation to the exact charge (never more than reserved).
func (r *Reservation) Settle(ctx context.Context, exactMicro int64) error {
	return r.adjust(ctx, min(exactMicro, r.amount)-r.amount)
}

// Release returns the whole reservation.
func (r *Reservation) Release(ctx context.Context) error { return r.adjust(ctx, -r.amount) }

func (r *Reservation) adjust(ctx context.Context, delta int64) error {
	if delta == 0 || len(r.keys) == 0 {
		return nil
	}
	ops := make([]store.Op, len(r.keys))
	for i, k := range r.keys {
		ops[i] = store.UpdateOp(k, store.Update{Add: map[string]int64{"spent": delta}}, store.Exists())
	}
	r.amount += delta
	return r.c.st.Transact(ctx, ops)
}

// APIError turns an exhausted limit into the 429 of the catalogue, naming
// the exhausted selector and when to retry; other errors pass through.
func APIError(err error) error {
	var ex *ExceededError
	if errors.As(err, &ex) {
		return apierr.New(apierr.LimitExceeded, "The %s limit of selector %s is exhausted.", ex.Kind, ex.Selector).
			WithHeader("X-Service-Limit-Operation", ex.Selector).
			WithHeader("Retry-After", strconv.Itoa(ex.RetryAfterSeconds))
	}
	return err
}
