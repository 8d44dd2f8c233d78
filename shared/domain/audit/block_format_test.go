package audit

import (
	"bytes"
	"compress/flate"
	"slices"
	"testing"

	"platformapi/shared/adapters/store"
)

// A block's bytes are plain deflate (RFC 1951), whichever deflater wrote
// them: the flusher's, and the standard library's that wrote the blocks
// already on disk, both read back as the same documents in the same order.
func TestABlockIsPlainDeflateReadBackWhicheverDeflaterWroteIt(t *testing.T) {
	var blk block
	for i := range blockEvents {
		e := journalEvent(i)
		blk.add(blockDoc{id: e.ID, doc: appendStored(nil, &e)})
	}
	ours, err := blk.deflate()
	if err != nil {
		t.Fatal(err)
	}
	var std bytes.Buffer
	w, _ := flate.NewWriter(&std, flate.BestSpeed)
	for _, d := range blk.docs {
		_, _ = w.Write(d.doc)
		_, _ = w.Write(newline)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"flusher's": ours, "standard library's": std.Bytes()} {
		it := store.NewItem(store.Key{PK: "aud#acct#20260310#0", SK: blk.max()})
		it[attrBlock], it[attrEvents] = data, int64(len(blk.docs))
		got, err := inflateItem(it)
		if err != nil {
			t.Fatalf("%s block: %v", name, err)
		}
		if !slices.EqualFunc(got.docs, blk.docs, func(a, b blockDoc) bool { return a.id == b.id && bytes.Equal(a.doc, b.doc) }) {
			t.Errorf("%s block: %d documents read back, not the %d written", name, len(got.docs), len(blk.docs))
		}
	}
}
