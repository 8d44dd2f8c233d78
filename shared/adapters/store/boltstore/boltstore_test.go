package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/store/storetest"
)

func open(t *testing.T, path string, opts ...boltstore.Option) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		s := open(t, filepath.Join(t.TempDir(), "store.db"))
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestDataSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	ctx := context.Background()
	s := open(t, path)
	it := store.Item{"pk": "p", "sk": "s", "n": int64(7), "b": []byte("x")}
	if err := s.Put(ctx, it); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer s.Close()
	got, err := s.Get(ctx, it.Key())
	if err != nil || got.Int("n") != 7 || string(got.Bytes("b")) != "x" {
		t.Fatalf("after reopen: %v, %v", got, err)
	}
}

func TestSecondOpenOfALockedFileFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path)
	defer s.Close()
	if _, err := boltstore.Open(path); err == nil {
		t.Fatal("second Open of a locked file succeeded")
	}
}

// TestItemExpiresWhenTheClockPassesItsExpiry moves the injected clock across
// an item's expiry, which the conformance suite cannot do with real time.
func TestItemExpiresWhenTheClockPassesItsExpiry(t *testing.T) {
	var now atomic.Int64
	now.Store(1_000_000)
	s := open(t, filepath.Join(t.TempDir(), "store.db"),
		boltstore.WithClock(func() time.Time { return time.Unix(now.Load(), 0) }))
	defer s.Close()
	ctx := context.Background()
	k := store.Key{PK: "p", SK: "s"}
	if err := s.Put(ctx, store.Item{"pk": "p", "sk": "s", "expiresAt": int64(1_000_010), "n": int64(5)}); err != nil {
		t.Fatal(err)
	}
	now.Store(1_000_009)
	if _, err := s.Get(ctx, k); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	now.Store(1_000_010)
	if _, err := s.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("at expiry: %v; want ErrNotFound", err)
	}
	got, err := s.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}}, store.NotExists())
	if err != nil || got.Int("n") != 1 || got.Has("expiresAt") {
		t.Fatalf("update after expiry = %v, %v; want a fresh item", got, err)
	}
}

// A batch seeks every key through one cursor and one key buffer: each key
// must answer for itself only, never for the neighbour a seek lands on
// (a longer key, a shorter one, the next partition), in a read batch and
// in a transaction's condition checks alike.
func TestABatchReadsEachKeyExactlyThroughOneCursor(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "store.db"))
	defer s.Close()
	ctx := context.Background()
	for _, k := range []store.Key{{PK: "a", SK: "b"}, {PK: "a", SK: "bcd"}, {PK: "ab", SK: "b"}, {PK: "c", SK: "x"}} {
		if err := s.Put(ctx, store.Item{"pk": k.PK, "sk": k.SK, "name": k.String()}); err != nil {
			t.Fatal(err)
		}
	}
	want := []store.Key{
		{PK: "c", SK: "x"}, {PK: "a", SK: "bc"}, {PK: "a", SK: "bcd"}, {PK: "a", SK: "a"},
		{PK: "ab", SK: "b"}, {PK: "a", SK: "b"}, {PK: "b", SK: "x"}, {PK: "a", SK: "bcde"}, {PK: "ab", SK: "bb"},
	}
	got, err := s.BatchGet(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{"c|x": true, "a|bcd": true, "ab|b": true, "a|b": true}
	for _, k := range want {
		it, ok := got[k.String()]
		if ok != present[k.String()] || ok && it.String("name") != k.String() {
			t.Errorf("%s: got %v (present %v), want present %v", k, it, ok, present[k.String()])
		}
	}
	if len(got) != len(present) {
		t.Errorf("batch answered %d items, want %d", len(got), len(present))
	}
	// In a transaction: an absent key between present ones passes
	// NotExists, a present one fails it with its own index.
	err = s.Transact(ctx, []store.Op{
		store.PutOp(store.Item{"pk": "a", "sk": "bc"}, store.NotExists()),
		store.PutOp(store.Item{"pk": "a", "sk": "bcd"}, store.NotExists()),
	})
	var tx *store.TxError
	if !errors.As(err, &tx) || tx.Index != 1 {
		t.Fatalf("transaction = %v, want member 1's condition to fail", err)
	}
}
