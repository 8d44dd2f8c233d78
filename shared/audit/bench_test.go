package audit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/audit"
	"platformapi/shared/store/boltstore"
)

// BenchmarkRecord is the audit cost a request pays on embedded storage: the
// AWS shape (one Put, rolled up by the stream) and the embedded recorder
// (one journal write; the flusher's batched commits are off the request but
// in the numbers).
func BenchmarkRecord(b *testing.B) {
	for _, c := range []struct {
		name string
		open func(b *testing.B, w *world) *audit.Recorder
	}{
		{"put", func(_ *testing.B, w *world) *audit.Recorder { return audit.NewRecorder(w.st, w.clock) }},
		{"embedded-journal", func(b *testing.B, w *world) *audit.Recorder { return embedded(b, w, b.TempDir()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := keyTree()
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "platform.db"), boltstore.WithClock(w.clock))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			w.st = st
			rec := c.open(b, w)
			defer rec.Close()
			project := "prj_bench"
			e := w.event(w.a1, project, "cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", 200, 10_000, time.Time{})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := rec.Record(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
