package audit_test

import (
	"testing"

	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/fastdeflate"
)

// BenchmarkBlockDeflate is the flusher's deflate of a full block (64
// events' documents, as the journal stores them) by each deflater: the
// default, compress/flate's, and the one the local process injects, with
// the block's size.
func BenchmarkBlockDeflate(b *testing.B) {
	for _, d := range []struct {
		name string
		new  audit.NewDeflater
	}{{"compress-flate", audit.StandardDeflater}, {"fastdeflate", fastdeflate.New}} {
		b.Run(d.name, func(b *testing.B) {
			deflate := audit.FullBlockDeflate(d.new)
			b.ReportAllocs()
			var out []byte
			for b.Loop() {
				var err error
				if out, err = deflate(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes-out")
		})
	}
}
