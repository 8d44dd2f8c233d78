package limits_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/store/throttlestore"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/domain/limits"
)

// windowItem reads key_a's single window item of the clock's minute.
func windowItem(t *testing.T, st store.Store, clock *testclock.Clock) store.Item {
	t.Helper()
	minute := clock.Now().Unix() / 60 * 60
	it, err := st.Get(context.Background(), store.Key{PK: "lim#key_a#*", SK: "rpm#" + itoa(minute)})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func fences(it store.Item) int {
	n := 0
	for name := range it {
		if strings.HasPrefix(name, "~") {
			n++
		}
	}
	return n
}

// A window item with its most fences, of a key's shard with a 64-character
// selector, a full share and fence numbers up to 10^12, is billed one
// write unit; a "*" window holds more before it costs two.
func TestAWindowItemHoldsMaxFencesInOneWriteUnit(t *testing.T) {
	minute := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC).Unix()
	item := func(selector string, n int) store.Item {
		it := store.NewItem(store.Key{PK: "lim#key_01KB0ZQ5W3Y7T0B9PQG8S2M4XE#" + selector + "#31", SK: "rpm#" + itoa(minute)})
		it["count"], it[store.AttrExpiresAt], it[limits.FenceCountAttr] = int64(500), minute+120, int64(n)
		for i := range n {
			it[limits.FenceName("Ab3-x_9Q", i)] = int64(999_999_999_999)
		}
		return it
	}
	long := strings.Repeat("s", 64)
	if size := throttlestore.ItemSize(item(long, limits.MaxFences)); throttlestore.WriteUnits(size) != 1 {
		t.Fatalf("%d fences make a %d-byte item: %v units", limits.MaxFences, size, throttlestore.WriteUnits(size))
	}
	n := limits.MaxFences
	for throttlestore.WriteUnits(throttlestore.ItemSize(item("*", n+1))) == 1 {
		n++
	}
	t.Logf("a \"*\" window item holds %d fences of 10^12 in one write unit (64-character selector: %d)", n, limits.MaxFences)
}

// Past its most fences a window item takes no more: the processes that
// find it crowded count on it in transactions, and every request is still
// counted once.
func TestAWindowCrowdedWithFencesCountsInTransactions(t *testing.T) {
	eachStore(t, func(t *testing.T, st *throttlestore.Store, clock *testclock.Clock) {
		const processes = limits.MaxFences + 6
		for i := range processes {
			c := limits.NewCounter(st, clock.Now, 10*time.Second)
			for r := range 2 {
				if _, err := c.Admit(context.Background(), rpm(500), []string{"projects.list"}); err != nil {
					t.Fatalf("process %d, request %d: %v", i, r, err)
				}
			}
		}
		it := windowItem(t, st.Store, clock)
		if it.Int("count") != 2*processes || fences(it) != limits.MaxFences || it.Int(limits.FenceCountAttr) != limits.MaxFences {
			t.Fatalf("window count %d with %d fences (counted %d); want %d with %d", it.Int("count"), fences(it), it.Int(limits.FenceCountAttr), 2*processes, limits.MaxFences)
		}
	})
}

// A window increment whose answer was lost after DynamoDB applied it is
// resent by the SDK; the resend fails the process's fence, which holds the
// increment's own number, so the request is admitted and counted once, in
// one UpdateItem (one write unit) and no transaction.
func TestAWindowIncrementWhoseAnswerWasLostCountsOnce(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	db, table := awstest.Table(t, env)
	clock := testclock.New(time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC))
	st := dynamostore.New(db, table, dynamostore.WithClock(clock.Now))
	c := limits.NewCounter(st, clock.Now, 10*time.Second)
	env.Calls.Reset()
	faults.Set("DynamoDB.UpdateItem", awsenv.LostAnswer)
	_, err := c.Admit(awstest.Context(t), rpm(500), []string{"projects.list"})
	hits := faults.Hits("DynamoDB.UpdateItem")
	faults.Clear()
	if err != nil || hits != 1 {
		t.Fatalf("admit: %v after %d lost answers", err, hits)
	}
	if calls := env.Calls.Snapshot(); calls["DynamoDB.UpdateItem"] != 2 || calls["DynamoDB.TransactWriteItems"] != 0 {
		t.Fatalf("calls = %v; want the UpdateItem and its resend, no transaction", calls)
	}
	if _, err := c.Admit(awstest.Context(t), rpm(500), []string{"projects.list"}); err != nil {
		t.Fatal(err)
	}
	if it := windowItem(t, st, clock); it.Int("count") != 2 {
		t.Fatalf("window count %d after two requests, one of them resent; want 2", it.Int("count"))
	}
}
