package dynamostore_test

import (
	"errors"
	"fmt"
	"testing"

	"platformapi/shared/awsenv"

	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/store"
	"platformapi/shared/store/dynamostore"
	"platformapi/shared/store/storetest"
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
// the SDK. An increment must still count once: it goes out as
// TransactWriteItems, whose client request token makes the second attempt a
// no-op, where a plain UpdateItem would apply it twice.
func TestAnIncrementWhoseAnswerWasLostCountsOnce(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	db, table := awstest.Table(t, env)
	s := dynamostore.New(db, table)
	ctx := awstest.Context(t)
	k := store.Key{PK: "p", SK: "counter"}
	faults.Set("DynamoDB.TransactWriteItems", awsenv.LostAnswer)
	faults.Set("DynamoDB.UpdateItem", awsenv.LostAnswer)
	err := s.Transact(ctx, []store.Op{store.UpdateOp(k, store.Update{Add: map[string]int64{"n": 1}}, store.NumBelow("n", 10))})
	hits := faults.Hits("DynamoDB.TransactWriteItems")
	faults.Clear()
	if err != nil || hits != 1 {
		t.Fatalf("transact: %v after %d lost answers", err, hits)
	}
	it, err := s.Get(ctx, k)
	if err != nil || it.Int("n") != 1 {
		t.Fatalf("counter = %v (%v); want 1", it, err)
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
