package throttlestore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/storetest"
	"platformapi/shared/adapters/store/throttlestore"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/awserr"
)

// TestConformance holds the wrapper to the port's rules on every backend,
// with budgets no test can exhaust.
func TestConformance(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			storetest.RunConformance(t, func(t *testing.T) store.Store {
				return throttlestore.New(b.Open(t, time.Now), throttlestore.WithUnits(1e12, 1e12))
			})
		})
	}
}

// open wraps a real embedded store with the default budgets (30 read and 10
// write units a second per partition key) on a clock the test moves.
func open(t *testing.T) (*throttlestore.Store, *testclock.Clock) {
	c := testclock.New(time.Unix(1_800_000_000, 0))
	return throttlestore.New(teststores.Embedded.Open(t, time.Now), throttlestore.WithClock(c.Now)), c
}

var ctx = context.Background()

func item(pk, sk string, bytes int) store.Item {
	it := store.NewItem(store.Key{PK: pk, SK: sk})
	if bytes > 0 {
		it["b"] = []byte(strings.Repeat("x", bytes))
	}
	return it
}

// wantThrottled checks the error is the one the DynamoDB adapter gives for
// ProvisionedThroughputExceededException.
func wantThrottled(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrUnavailable) || awserr.Code(err) != "ProvisionedThroughputExceededException" {
		t.Fatalf("err = %v; want a throttled ErrUnavailable", err)
	}
}

// seed writes items with the budgets lifted, through a second wrapper over
// the same inner store, so the test's partitions start full.
func seed(t *testing.T, s *throttlestore.Store, items ...store.Item) {
	t.Helper()
	free := throttlestore.New(s.Store, throttlestore.WithUnits(1e12, 1e12))
	for _, it := range items {
		if err := free.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
}

// gets counts how many of n reads of k pass.
func gets(s *throttlestore.Store, k store.Key, n int) (ok int) {
	for range n {
		if _, err := s.Get(ctx, k); err == nil {
			ok++
		}
	}
	return ok
}

func TestOnePartitionServesThirtyReadUnitsASecond(t *testing.T) {
	s, c := open(t)
	seed(t, s, item("p", "a", 10))
	k := store.Key{PK: "p", SK: "a"}
	if ok := gets(s, k, 30); ok != 30 {
		t.Fatalf("%d of 30 reads passed", ok)
	}
	_, err := s.Get(ctx, k)
	wantThrottled(t, err)
	c.Advance(time.Second)
	if ok := gets(s, k, 31); ok != 30 {
		t.Fatalf("after a second %d of 31 reads passed; want 30", ok)
	}
	if p := s.Partitions()["p"]; p.ReadUnits != 60 || p.Throttled != 2 {
		t.Fatalf("partition stats %+v", p)
	}
}

func TestPartitionKeysHaveTheirOwnBudgets(t *testing.T) {
	s, _ := open(t)
	seed(t, s, item("p", "a", 0), item("p", "b", 0), item("q", "a", 0))
	gets(s, store.Key{PK: "p", SK: "a"}, 30)
	_, err := s.Get(ctx, store.Key{PK: "p", SK: "b"})
	wantThrottled(t, err) // another item of the same partition key
	if ok := gets(s, store.Key{PK: "q", SK: "a"}, 30); ok != 30 {
		t.Fatalf("another partition key passed %d of 30", ok)
	}
}

func TestRefillNeverExceedsOneSecondOfBudget(t *testing.T) {
	s, c := open(t)
	seed(t, s, item("p", "a", 0))
	gets(s, store.Key{PK: "p", SK: "a"}, 1)
	c.Advance(time.Minute)
	if ok := gets(s, store.Key{PK: "p", SK: "a"}, 40); ok != 30 {
		t.Fatalf("after an idle minute %d of 40 reads passed; want 30", ok)
	}
}

func TestRefillIsProportionalToTimePassed(t *testing.T) {
	s, c := open(t)
	seed(t, s, item("p", "a", 0))
	gets(s, store.Key{PK: "p", SK: "a"}, 31)
	c.Advance(100 * time.Millisecond)
	if ok := gets(s, store.Key{PK: "p", SK: "a"}, 5); ok != 3 {
		t.Fatalf("a tenth of a second later %d of 5 reads passed; want 3", ok)
	}
}

// TestUnitsAreCountedAsDynamoDBBillsThem: the write units a partition has
// left after each kind of operation, starting from its 10.
func TestUnitsAreCountedAsDynamoDBBillsThem(t *testing.T) {
	small := func(sk string) store.Item { return item("p", sk, 0) }
	for _, tc := range []struct {
		name  string
		write func(s *throttlestore.Store) error
		units float64
	}{
		{"PutOfASmallItemCostsOneUnit", func(s *throttlestore.Store) error { return s.Put(ctx, small("a")) }, 1},
		{"PutCostsOneUnitPerKilobyteRoundedUp", func(s *throttlestore.Store) error { return s.Put(ctx, item("p", "a", 2100)) }, 3},
		{"OverwriteCostsTheLargerOfBeforeAndAfter", func(s *throttlestore.Store) error {
			seed(t, s, item("p", "a", 3000))
			return s.Put(ctx, small("a"))
		}, 3},
		{"UpdateCostsTheItemItLeaves", func(s *throttlestore.Store) error {
			_, err := s.Update(ctx, store.Key{PK: "p", SK: "a"}, store.Update{Set: map[string]any{"b": []byte(strings.Repeat("x", 1500))}})
			return err
		}, 2},
		{"FailedConditionStillSpendsItsUnits", func(s *throttlestore.Store) error {
			seed(t, s, small("a"))
			if err := s.Put(ctx, small("a"), store.NotExists()); !errors.Is(err, store.ErrConditionFailed) {
				t.Fatalf("conditional put: %v", err)
			}
			return nil
		}, 1},
		{"LoneTransactionWriteCostsOnce", func(s *throttlestore.Store) error {
			return s.Transact(ctx, []store.Op{store.PutOp(small("a"))})
		}, 1},
		{"LoneIncrementCostsTwiceAsATransaction", func(s *throttlestore.Store) error {
			return s.Transact(ctx, []store.Op{store.UpdateOp(store.Key{PK: "p", SK: "n"}, store.Update{Add: map[string]int64{"n": 1}})})
		}, 2},
		{"TransactionMembersCostTwice", func(s *throttlestore.Store) error {
			return s.Transact(ctx, []store.Op{store.PutOp(small("a")), store.UpdateOp(store.Key{PK: "p", SK: "b"}, store.Update{Add: map[string]int64{"n": 1}})})
		}, 4},
		{"ConditionCheckCostsLikeAWrite", func(s *throttlestore.Store) error {
			seed(t, s, small("c"))
			return s.Transact(ctx, []store.Op{store.PutOp(small("a")), store.CheckOp(store.Key{PK: "p", SK: "c"}, store.Exists())})
		}, 4},
		{"DeleteCostsTheItemItRemoves", func(s *throttlestore.Store) error {
			seed(t, s, item("p", "a", 1500))
			return s.Delete(ctx, store.Key{PK: "p", SK: "a"})
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := open(t)
			if err := tc.write(s); err != nil {
				t.Fatal(err)
			}
			if got := s.Partitions()["p"].WriteUnits; got != tc.units {
				t.Fatalf("spent %v write units; want %v", got, tc.units)
			}
		})
	}
}

func TestReadsCostOneUnitPerFourKilobytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		read  func(s *throttlestore.Store) error
		units float64
	}{
		{"GetOfALargeItem", func(s *throttlestore.Store) error {
			_, err := s.Get(ctx, store.Key{PK: "p", SK: "big"})
			return err
		}, 3},
		{"GetOfAnAbsentItem", func(s *throttlestore.Store) error {
			_, err := s.Get(ctx, store.Key{PK: "p", SK: "none"})
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		}, 1},
		{"BatchGetChargesEachItem", func(s *throttlestore.Store) error {
			_, err := s.BatchGet(ctx, []store.Key{{PK: "p", SK: "big"}, {PK: "p", SK: "small"}, {PK: "p", SK: "none"}})
			return err
		}, 5},
		{"QueryRoundsUpOnceOverWhatItRead", func(s *throttlestore.Store) error {
			_, err := s.Query(ctx, store.Query{PK: "p"})
			return err
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := open(t)
			seed(t, s, item("p", "big", 9000), item("p", "small", 10))
			if err := tc.read(s); err != nil {
				t.Fatal(err)
			}
			if got := s.Partitions()["p"].ReadUnits; got != tc.units {
				t.Fatalf("spent %v read units; want %v", got, tc.units)
			}
		})
	}
}

func TestThrottledTransactionHasNoEffectOnAnyPartition(t *testing.T) {
	s, _ := open(t)
	for i := range 10 {
		if err := s.Put(ctx, item("hot", string(rune('a'+i)), 0)); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Transact(ctx, []store.Op{store.PutOp(item("cold", "x", 0)), store.PutOp(item("hot", "y", 0))})
	wantThrottled(t, err)
	if _, err := s.Store.Get(ctx, store.Key{PK: "cold", SK: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the throttled transaction wrote its other member: %v", err)
	}
	if p := s.Partitions()["cold"]; p.WriteUnits != 0 {
		t.Fatalf("the cold partition was charged %v units", p.WriteUnits)
	}
}

func TestAnItemBiggerThanASecondsBudgetPassesFromAFullPartitionOnly(t *testing.T) {
	s, c := open(t)
	if err := s.Put(ctx, item("p", "a", 20*1024)); err != nil {
		t.Fatalf("from a full partition: %v", err)
	}
	c.Advance(time.Second)
	wantThrottled(t, s.Put(ctx, item("p", "b", 0))) // still in debt: 10 − 21 + 10 < 1
	c.Advance(time.Second)
	if err := s.Put(ctx, item("p", "b", 0)); err != nil {
		t.Fatalf("once the debt is repaid: %v", err)
	}
}

func TestFactorScalesDynamoDBsCeilings(t *testing.T) {
	c := testclock.New(time.Unix(1_800_000_000, 0))
	s := throttlestore.New(teststores.Embedded.Open(t, time.Now), throttlestore.WithClock(c.Now), throttlestore.WithFactor(1000))
	seed(t, s, item("p", "a", 0))
	if ok := gets(s, store.Key{PK: "p", SK: "a"}, 4); ok != 3 {
		t.Fatalf("factor 1000: %d of 4 reads passed; want 3", ok)
	}
	ok := 0
	for range 2 {
		if s.Put(ctx, item("p", "a", 0)) == nil {
			ok++
		}
	}
	if ok != 1 || s.Throttled() != 2 {
		t.Fatalf("factor 1000: %d of 2 writes passed, %d throttled; want 1 and 2", ok, s.Throttled())
	}
}

func TestNumbersTakeOneBytePerTwoDigitsPlusOne(t *testing.T) {
	k := store.Key{PK: "p", SK: "s"}
	for _, c := range []struct {
		n    int64
		want int
	}{{0, 2}, {7, 2}, {12, 2}, {123, 3}, {12345, 4}} {
		it := store.NewItem(k)
		it["n"] = c.n
		if got := throttlestore.ItemSize(it) - throttlestore.KeySize(k) - 1; got != c.want {
			t.Errorf("size of %d = %d, want %d", c.n, got, c.want)
		}
	}
}
