package audit_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/domain/audit"
)

// BenchmarkRecord is the audit cost a request pays on embedded storage: the
// AWS shape (one Put, rolled up by the stream) and the embedded recorder
// (one journal write; the flusher's batched commits are off the request but
// in the numbers). The clock moves as under load: a stopped one would give
// every event the same millisecond and random keys, which no server writes.
func BenchmarkRecord(b *testing.B) {
	for _, c := range []struct {
		name string
		open func(b *testing.B, w *world) *audit.Recorder
	}{
		{"put", func(_ *testing.B, w *world) *audit.Recorder { return audit.NewRecorder(w.st, w.clock.Now) }},
		{"embedded-journal", func(b *testing.B, w *world) *audit.Recorder { return embedded(b, w, b.TempDir()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := keyTree()
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "platform.db"), boltstore.WithClock(w.clock.Now))
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
			cpu0 := processCPU()
			for b.Loop() {
				// Events arrive as under load, 10,000 a second: their
				// ids, and so their keys, ascend within each shard.
				w.clock.Advance(100 * time.Microsecond)
				if err := rec.Record(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
			// Every goroutine's CPU, the flusher's and the collector's
			// included: the wall time per op hides what runs beside it.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the user plus system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
