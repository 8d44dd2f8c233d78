package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/store"
	"platformapi/shared/store/boltstore"
	"platformapi/shared/store/storetest"
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
