package dynamostore_test

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"platformapi/shared/adapters/awsenv"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/store/storetest"
)

func TestConformance(t *testing.T) {
	env := awstest.Env(t)
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		db, table := awstest.Table(t, env)
		return dynamostore.New(db, table)
	})
}

// TestOutagesAnswerUnavailableAndWriteNothing injects the failures DynamoDB
// produces under load or on its side, after the SDK's own retries.
func TestOutagesAnswerUnavailableAndWriteNothing(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	db, table := awstest.Table(t, env)
	s := dynamostore.New(db, table)
	ctx := awstest.Context(t)
	k := store.Key{PK: "p", SK: "s"}
	writes := []struct {
		op    string
		write func() error
	}{
		{"DynamoDB.PutItem", func() error { return s.Put(ctx, store.NewItem(k)) }},
		{"DynamoDB.UpdateItem", func() error {
			_, err := s.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}})
			return err
		}},
		{"DynamoDB.TransactWriteItems", func() error {
			return s.Transact(ctx, []store.Op{store.PutOp(store.NewItem(k)), store.PutOp(store.NewItem(store.Key{PK: "p", SK: "t"}))})
		}},
	}
	for _, fault := range []awsenv.Fault{awsenv.Throttle, awsenv.ServerError} {
		for _, w := range writes {
			t.Run(fmt.Sprintf("%s/%d", w.op, fault), func(t *testing.T) {
				faults.Set(w.op, fault)
				err := w.write()
				faults.Clear()
				if !errors.Is(err, store.ErrUnavailable) {
					t.Fatalf("err = %v; want ErrUnavailable", err)
				}
				if faults.Hits(w.op) == 0 {
					t.Fatal("fault never fired")
				}
				page, err := s.Query(ctx, store.Query{PK: "p"})
				if err != nil || len(page.Items) != 0 {
					t.Fatalf("after the outage: %v, %v; want nothing written", page.Items, err)
				}
			})
		}
	}
}

// A write whose answer was lost after DynamoDB applied it is sent again by
// the SDK. An increment must still count once: as a fenced UpdateItem, the
// resend fails its fence and finds the fence at its own value, so it was
// applied; as TransactWriteItems, the client request token makes the resend
// a no-op.
func TestAnIncrementWhoseAnswerWasLostCountsOnce(t *testing.T) {
	k := store.Key{PK: "p", SK: "counter"}
	inc := store.Update{Add: map[string]int64{"n": 1}}
	fenced := store.Update{Add: map[string]int64{"n": 1}, Set: map[string]any{"~proc0": int64(1)}}
	for _, tc := range []struct {
		name, op string
		write    func(s *dynamostore.Store) error
	}{
		{"fenced UpdateItem", "DynamoDB.UpdateItem", func(s *dynamostore.Store) error {
			_, err := s.Update(t.Context(), k, fenced, store.NumBelow("n", 10), store.Fence("~proc0", 1))
			return err
		}},
		{"TransactWriteItems", "DynamoDB.TransactWriteItems", func(s *dynamostore.Store) error {
			return s.Transact(t.Context(), []store.Op{store.UpdateOp(k, inc, store.NumBelow("n", 10))})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faults := awsenv.NewFaults()
			env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
			db, table := awstest.Table(t, env)
			s := dynamostore.New(db, table)
			faults.Set(tc.op, awsenv.LostAnswer)
			err := tc.write(s)
			hits := faults.Hits(tc.op)
			faults.Clear()
			if err != nil || hits != 1 {
				t.Fatalf("write: %v after %d lost answers", err, hits)
			}
			it, err := s.Get(t.Context(), k)
			if err != nil || it.Int("n") != 1 {
				t.Fatalf("counter = %v (%v); want 1", it, err)
			}
		})
	}
}

// A fenced update refused by its condition is taken for an applied resend
// only when the item holds its own fence at its own value: not another
// writer's fence at that value, nor its own fence below it.
func TestAFencedUpdateIsAppliedOnlyWhenItsOwnFenceHoldsItsValue(t *testing.T) {
	env := awstest.Env(t)
	ctx := awstest.Context(t)
	for _, tc := range []struct {
		name    string
		item    store.Item // the window before the update
		applied bool
	}{
		{"its own fence at its value: a resend", store.Item{"n": int64(10), "~a": int64(7)}, true},
		{"another writer's fence at its value", store.Item{"n": int64(10), "~b": int64(7)}, false},
		{"its own fence below its value", store.Item{"n": int64(10), "~a": int64(6)}, false},
		{"no fence", store.Item{"n": int64(10)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, table := awstest.Table(t, env)
			s := dynamostore.New(db, table)
			k := store.Key{PK: "p", SK: "w"}
			it := store.NewItem(k)
			maps.Copy(it, tc.item)
			if err := s.Put(ctx, it); err != nil {
				t.Fatal(err)
			}
			_, err := s.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}, Set: map[string]any{"~a": int64(7)}},
				store.NumBelow("n", 10), store.Fence("~a", 7))
			if tc.applied != (err == nil) || !tc.applied && !errors.Is(err, store.ErrConditionFailed) {
				t.Fatalf("err = %v; applied should be %v", err, tc.applied)
			}
			got, err := s.Get(ctx, k)
			if err != nil || got.Int("n") != 10 {
				t.Fatalf("window = %v (%v); want it unchanged at 10", got, err)
			}
		})
	}
}

func TestReadsOfAnOutageAnswerUnavailable(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	db, table := awstest.Table(t, env)
	s := dynamostore.New(db, table)
	ctx := awstest.Context(t)
	for _, op := range []string{"DynamoDB.GetItem", "DynamoDB.BatchGetItem", "DynamoDB.Query"} {
		faults.Set(op, awsenv.Throttle)
	}
	defer faults.Clear()
	k := store.Key{PK: "p", SK: "s"}
	_, err1 := s.Get(ctx, k)
	_, err2 := s.BatchGet(ctx, []store.Key{k})
	_, err3 := s.Query(ctx, store.Query{PK: "p"})
	for i, err := range []error{err1, err2, err3} {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("read %d: err = %v; want ErrUnavailable", i, err)
		}
	}
}

func TestEveryRoundTripIsCounted(t *testing.T) {
	env := awstest.Env(t)
	db, table := awstest.Table(t, env)
	s := dynamostore.New(db, table)
	ctx := awstest.Context(t)
	env.Calls.Reset()
	k := store.Key{PK: "p", SK: "s"}
	if err := s.Put(ctx, store.NewItem(k)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BatchGet(ctx, []store.Key{k, {PK: "p", SK: "u"}}); err != nil {
		t.Fatal(err)
	}
	got := env.Calls.Snapshot()
	want := map[string]int{"DynamoDB.PutItem": 1, "DynamoDB.GetItem": 1, "DynamoDB.BatchGetItem": 1}
	if len(got) != len(want) || env.Calls.Total() != 3 {
		t.Fatalf("calls = %v; want %v", got, want)
	}
	for op, n := range want {
		if got[op] != n {
			t.Fatalf("calls = %v; want %v", got, want)
		}
	}
}
