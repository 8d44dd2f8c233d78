package apitest

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
)

// A test environment must run the paths the local server runs: the
// recorder keeps the embedded store's extras, and records what is written
// through them.
func TestTheRecorderKeepsTheEmbeddedStoresExtrasAndRecordsThroughThem(t *testing.T) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bolt.Close() })
	rec, st := recording(bolt)
	emb, ok := st.(embeddedStore)
	if !ok {
		t.Fatal("the recorder of an embedded store hides its extras")
	}
	ctx := context.Background()
	it := store.Item{store.AttrPK: "p", store.AttrSK: "s", "v": "written-in-one-commit"}
	err = emb.InOneCommit(ctx, func(transact func([]store.Op) error) error {
		return transact([]store.Op{store.PutOp(it)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rec.writes, func(b []byte) bool { return bytes.Equal(b, []byte("written-in-one-commit")) }) {
		t.Error("a write through InOneCommit is not recorded")
	}
	got, err := emb.BatchGetShared(ctx, []store.Key{it.Key()})
	if err != nil || got[it.Key().String()].String("v") != "written-in-one-commit" {
		t.Errorf("BatchGetShared = %v, %v", got, err)
	}

	// A store without the extras gets a recorder without them.
	_, plain := recording(portOnly{bolt})
	if _, ok := plain.(embeddedStore); ok {
		t.Error("the recorder claims extras its store lacks")
	}
}

// portOnly hides everything of a store but the port.
type portOnly struct{ store.Store }
