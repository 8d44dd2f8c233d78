package limits_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/throttlestore"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/limits"
)

// eachStore runs test on every backend's store, seen through throttlestore
// with budgets no test exhausts, for its count of units per partition key.
func eachStore(t *testing.T, test func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			clock := testclock.New(time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC))
			test(t, throttlestore.New(b.Open(t, clock.Now), throttlestore.WithUnits(1e12, 1e12)), clock)
		})
	}
}

func rpm(n int64) []limits.Owner {
	return []limits.Owner{{ID: "key_a", Limits: limits.Set{"*": {RequestsPerMinute: ptr(n)}}}}
}

// admitAll sends n requests from each counter, from workers goroutines
// each, and counts the admitted and the refused.
func admitAll(t *testing.T, counters []*limits.Counter, chain []limits.Owner, n, workers int) (admitted, refused int) {
	var ok, no atomic.Int32
	var wg sync.WaitGroup
	for _, c := range counters {
		for w := range workers {
			wg.Go(func() {
				for i := w; i < n; i += workers {
					_, err := c.Admit(context.Background(), chain, []string{"projects.list"})
					var ex *limits.ExceededError
					switch {
					case err == nil:
						ok.Add(1)
					case errors.As(err, &ex) && ex.Kind == "requestsPerMinute":
						no.Add(1)
					default:
						t.Errorf("admit: %v", err)
					}
				}
			})
		}
	}
	wg.Wait()
	return int(ok.Load()), int(no.Load())
}

// windowWrites sums the write units spent on the window items of key_a.
func windowWrites(st *throttlestore.Store) (total float64, partitions int) {
	for pk, p := range st.Partitions() {
		if strings.HasPrefix(pk, "lim#key_a#") && p.WriteUnits > 0 {
			total += p.WriteUnits
			partitions++
		}
	}
	return total, partitions
}

// Two processes (two counters on one store) hammer a window spread over
// two shards: never more than its limit is admitted, and every request the
// window counted was admitted or is a token a process still holds (a busy
// process counts requests in batches).
func TestAShardedWindowNeverAdmitsMoreThanItsLimitAcrossProcesses(t *testing.T) {
	eachStore(t, func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock) {
		const limit = 1000 // two shards of 500
		counters := []*limits.Counter{
			limits.NewCounter(st, clock.Now, 10*time.Second),
			limits.NewCounter(st, clock.Now, 10*time.Second),
		}
		admitted, refused := admitAll(t, counters, rpm(limit), 600, 4)
		held := limits.Unused(counters[0]) + limits.Unused(counters[1])
		if admitted > limit || int64(admitted)+held != limit || admitted+refused != 1200 {
			t.Fatalf("admitted %d, refused %d, %d tokens held; want admitted + held = %d", admitted, refused, held, limit)
		}
		if _, parts := windowWrites(st); parts != 2 {
			t.Fatalf("the window was written in %d partitions; want 2", parts)
		}
		clock.Advance(time.Minute)
		if admitted, _ := admitAll(t, counters[:1], rpm(limit), 1, 1); admitted != 1 {
			t.Fatal("the next window did not admit")
		}
	})
}

// One process admits exactly its limit, batches or not: it uses the tokens
// it holds before it refuses.
func TestOneProcessAdmitsExactlyItsLimit(t *testing.T) {
	eachStore(t, func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock) {
		c := limits.NewCounter(st, clock.Now, 10*time.Second)
		for _, limit := range []int64{64, 2000} {
			chain := []limits.Owner{{ID: "key_" + itoa(limit), Limits: limits.Set{"*": {RequestsPerMinute: ptr(limit)}}}}
			admitted, refused := admitAll(t, []*limits.Counter{c}, chain, int(limit)+40, 4)
			if int64(admitted) != limit || refused != 40 || limits.Unused(c) != 0 {
				t.Fatalf("limit %d: admitted %d, refused %d, %d held", limit, admitted, refused, limits.Unused(c))
			}
		}
	})
}

// A busy process counts its requests in batches sized by its own rate, so
// a hot limited key costs a fraction of a write a request; a key used a few
// times a second (here one request a second) still counts each request on
// its own, so nothing is held back from other processes, in one fenced
// conditional write (one unit) each.
func TestABusyProcessCountsRequestsInBatches(t *testing.T) {
	eachStore(t, func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock) {
		c := limits.NewCounter(st, clock.Now, 10*time.Second)
		const limit, n = 600_000, 1000
		if admitted, _ := admitAll(t, []*limits.Counter{c}, rpm(limit), n, 1); admitted != n {
			t.Fatalf("admitted %d of %d", admitted, n)
		}
		busy, _ := windowWrites(st)
		if busy > 2*n/10 {
			t.Fatalf("%d requests at once wrote %v units; want batches (at most %d units)", n, busy, 2*n/10)
		}
		clock.Advance(time.Minute)
		for range 20 {
			clock.Advance(time.Second)
			if admitted, _ := admitAll(t, []*limits.Counter{c}, rpm(limit), 1, 1); admitted != 1 {
				t.Fatal("a request a second was refused")
			}
		}
		if slow, _ := windowWrites(st); slow-busy != 20 || limits.Unused(c) != 0 {
			t.Fatalf("20 requests a second apart wrote %v units and left %d held; want 20 and none", slow-busy, limits.Unused(c))
		}
	})
}

// Once every shard refused, a process refuses without a write: a key past
// its limit costs at most two refused writes (a batch, then the request
// alone) per shard and minute (and per request racing when a shard fills;
// here one at a time).
func TestAFullWindowRefusesWithoutWriting(t *testing.T) {
	eachStore(t, func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock) {
		c := limits.NewCounter(st, clock.Now, 10*time.Second)
		const limit = 1500 // three shards of 500
		admitted, _ := admitAll(t, []*limits.Counter{c}, rpm(limit), limit, 4)
		if admitted != limit {
			t.Fatalf("admitted %d of the limit %d", admitted, limit)
		}
		before, parts := windowWrites(st)
		if parts != 3 {
			t.Fatalf("the window was written in %d partitions; want 3", parts)
		}
		if _, refused := admitAll(t, []*limits.Counter{c}, rpm(limit), 100, 1); refused != 100 {
			t.Fatalf("refused %d of 100 past the limit", refused)
		}
		// A refused increment is one conditional write (one unit), but a
		// write that would have added a fence may have been refused for
		// the item's fences, and the request alone then goes as a
		// transaction (two units).
		if after, _ := windowWrites(st); after-before > 3*3 {
			t.Fatalf("100 refusals wrote %v units; want at most two refused writes per shard (9 units)", after-before)
		}
	})
}

// A limit of up to 500 a minute keeps the single window item it always
// had, so nothing changes for small limits.
func TestASmallWindowKeepsItsSingleItem(t *testing.T) {
	eachStore(t, func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock) {
		c := limits.NewCounter(st, clock.Now, 10*time.Second)
		if admitted, _ := admitAll(t, []*limits.Counter{c}, rpm(500), 5, 1); admitted != 5 {
			t.Fatalf("admitted %d of 5", admitted)
		}
		minute := clock.Now().Unix() / 60 * 60
		it, err := st.Store.Get(context.Background(), store.Key{PK: "lim#key_a#*", SK: "rpm#" + itoa(minute)})
		if err != nil || it.Int("count") != 5 {
			t.Fatalf("window item = %v, %v; want count 5", it, err)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
