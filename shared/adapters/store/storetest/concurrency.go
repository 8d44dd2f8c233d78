package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"platformapi/shared/adapters/store"
)

// race runs fn n times at once and returns each call's error.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = fn(i)
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// tally counts successes and refuses any error but a failed condition.
func tally(t *testing.T, errs []error) (ok int) {
	t.Helper()
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrConditionFailed):
			t.Fatalf("unexpected error under contention: %v", err)
		}
	}
	return ok
}

var concurrencyRules = []rule{
	{"ConcurrentConditionalPutsHaveExactlyOneWinner", func(t *testing.T, s store.Store) {
		errs := race(32, func(i int) error {
			return s.Put(ctx(t), item(key("claim"), "owner", int64(i)), store.NotExists())
		})
		if ok := tally(t, errs); ok != 1 {
			t.Fatalf("%d winners; want 1", ok)
		}
		owner := mustGet(t, s, key("claim")).Int("owner")
		if errs[owner] != nil {
			t.Fatalf("stored owner %d did not win", owner)
		}
	}},
	{"ConcurrentAddsStopExactlyAtTheLimit", func(t *testing.T, s store.Store) {
		const limit = 40
		mustPut(t, s, item(key("counter"), "n", int64(0)))
		errs := race(64, func(int) error {
			_, err := s.Update(ctx(t), key("counter"), store.Update{Add: map[string]int64{"n": 1}}, store.NumBelow("n", limit))
			return err
		})
		if ok := tally(t, errs); ok != limit {
			t.Fatalf("%d adds admitted; want %d", ok, limit)
		}
		if n := mustGet(t, s, key("counter")).Int("n"); n != limit {
			t.Fatalf("counter = %d; want %d", n, limit)
		}
	}},
	{"ConcurrentTransfersKeepTheTotal", func(t *testing.T, s store.Store) {
		const accounts, start, amount = 3, 50, 10
		acct := func(i int) store.Key { return key(fmt.Sprintf("acct#%d", i%accounts)) }
		for i := range accounts {
			mustPut(t, s, item(acct(i), "balance", int64(start)))
		}
		mustPut(t, s, item(key("ledger"), "entries", int64(0)))
		errs := race(32, func(i int) error {
			return s.Transact(ctx(t), []store.Op{
				store.UpdateOp(acct(i), store.Update{Add: map[string]int64{"balance": -amount}}, store.NumAtLeast("balance", amount)),
				store.UpdateOp(acct(i+1), store.Update{Add: map[string]int64{"balance": amount}}, store.Exists()),
				store.UpdateOp(key("ledger"), store.Update{Add: map[string]int64{"entries": 1}}),
			})
		})
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrConditionFailed), errors.Is(err, store.ErrUnavailable):
				// a refused transfer or a conflict the adapter gave up on: no effect
			default:
				t.Fatalf("transfer: %v", err)
			}
		}
		var total int64
		for i := range accounts {
			b := mustGet(t, s, acct(i)).Int("balance")
			if b < 0 {
				t.Fatalf("account %d went negative: %d", i, b)
			}
			total += b
		}
		if total != accounts*start {
			t.Fatalf("total = %d; want %d", total, accounts*start)
		}
		if n := mustGet(t, s, key("ledger")).Int("entries"); n != int64(ok) {
			t.Fatalf("ledger has %d entries for %d transfers", n, ok)
		}
		if ok == 0 {
			t.Fatal("no transfer succeeded")
		}
	}},
}
