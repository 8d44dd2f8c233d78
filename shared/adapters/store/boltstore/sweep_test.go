package boltstore

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"platformapi/shared/adapters/store"
)

func TestSweepDeletesOnlyExpiredItemsPhysically(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := s.unix()
	for i := range 2*sweepBatch + 5 {
		it := store.Item{"pk": "p", "sk": string(rune(0x100 + i))}
		if i%2 == 0 {
			it["expiresAt"] = now - 1
		}
		if err := s.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	s.sweep()
	var left int
	if err := s.db.View(func(tx *bolt.Tx) error {
		left = tx.Bucket(itemsBucket).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if left != sweepBatch+2 {
		t.Fatalf("%d items left after sweep; want %d", left, sweepBatch+2)
	}
}
