package limits_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/domain/limits"
)

// BenchmarkAdmit: one request of a depth-3 chain whose leaf has a "*"
// requests-per-minute limit, as the benchmark's read is admitted: in the
// embedded server's memory, and on the unsynced bbolt store it counted on before.
func BenchmarkAdmit(b *testing.B) {
	n := int64(1 << 40)
	chain := []limits.Owner{{ID: "key_root"}, {ID: "key_child"}, {ID: "key_leaf", Limits: limits.Set{"*": {RequestsPerMinute: &n}}}}
	ops := []string{"credits.balance"}
	for _, c := range []struct {
		name string
		new  func(b *testing.B) *limits.Counter
	}{
		{"Local", func(*testing.B) *limits.Counter {
			return limits.NewCounter(nil, time.Now, 10*time.Second).WithLocalRequests()
		}},
		{"BoltWithoutSync", func(b *testing.B) *limits.Counter {
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "counters.db"), boltstore.WithoutSync())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return limits.NewCounter(st, time.Now, 10*time.Second)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			counter := c.new(b)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				lease, err := counter.Admit(ctx, chain, ops)
				if err != nil {
					b.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
