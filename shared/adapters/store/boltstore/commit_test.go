package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"platformapi/shared/adapters/store"
)

// TestInOneCommitTakesGroupsBeyondTheItemLimitAllOrNone: a group may hold
// more than store.MaxTransactItems ops; a group whose condition fails
// applies nothing and names its member; an error from fn rolls back every
// group it applied.
func TestInOneCommitTakesGroupsBeyondTheItemLimitAllOrNone(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "store.db"))
	defer s.Close()
	if err := s.Put(ctx, store.Item{"pk": "p", "sk": "taken"}); err != nil {
		t.Fatal(err)
	}
	put := func(sk string) store.Op { return store.PutOp(store.Item{"pk": "p", "sk": sk}, store.NotExists()) }
	var big []store.Op
	for i := range 3 * store.MaxTransactItems {
		big = append(big, put(fmt.Sprintf("big%04d", i)))
	}
	big = append(big, store.UpdateOp(store.Key{PK: "p", SK: "count"}, store.Update{Add: map[string]int64{"n": 1}}))
	err := s.InOneCommit(ctx, func(transact func([]store.Op) error) error {
		var tx *store.TxError
		if err := transact([]store.Op{put("fresh"), put("taken")}); !errors.As(err, &tx) || tx.Index != 1 {
			t.Errorf("a failed condition = %v, want a TxError at member 1", err)
		}
		return transact(big)
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := s.Query(ctx, store.Query{PK: "p", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 3*store.MaxTransactItems+2 {
		t.Errorf("%d items, want the big group, its counter and the one put before", len(page.Items))
	}
	if _, err := s.Get(ctx, store.Key{PK: "p", SK: "fresh"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a member of the failed group was applied: %v", err)
	}

	boom := errors.New("boom")
	err = s.InOneCommit(ctx, func(transact func([]store.Op) error) error {
		if err := transact([]store.Op{put("rolledback")}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InOneCommit = %v, want fn's error", err)
	}
	if _, err := s.Get(ctx, store.Key{PK: "p", SK: "rolledback"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a group of a failed commit stayed: %v", err)
	}
}

// TestInOneCommitPacksThePagesOfAscendingKeysFull: a bulk writer whose keys
// ascend within a few partitions (the audit flusher) leaves its leaf pages
// at least 90% used, where bbolt's default split leaves them half empty.
func TestInOneCommitPacksThePagesOfAscendingKeysFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path)
	doc := []byte(strings.Repeat("x", 700))
	for commit := range 20 {
		var ops []store.Op
		for i := range 100 {
			it := store.Item{"pk": fmt.Sprintf("part#%d", i%4), "sk": fmt.Sprintf("%06d", commit*100+i)}
			it[store.AttrDoc] = doc
			ops = append(ops, store.PutOp(it, store.NotExists()))
		}
		if err := s.InOneCommit(ctx, func(transact func([]store.Op) error) error { return transact(ops) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		st := tx.Bucket([]byte("items")).Stats()
		if used := float64(st.LeafInuse) / float64(st.LeafAlloc); used < 0.9 {
			t.Errorf("leaf pages %.0f%% used (%d pages for %d items), want at least 90%%", 100*used, st.LeafPageN, st.KeyN)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
