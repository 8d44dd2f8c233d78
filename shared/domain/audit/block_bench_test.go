package audit

import "testing"

// BenchmarkBlockDeflate is the flusher's deflate of a full block: 64
// events' documents, as the journal stores them.
func BenchmarkBlockDeflate(b *testing.B) {
	var blk block
	for i := range blockEvents {
		e := journalEvent(i)
		blk.add(blockDoc{id: e.ID, doc: appendStored(nil, &e)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := blk.deflate(); err != nil {
			b.Fatal(err)
		}
	}
}
