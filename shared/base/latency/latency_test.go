package latency

import (
	"testing"
	"time"
)

// A quantile is the upper bound of its sample's bucket: never below the
// sample, and within a quarter of it.
func TestAQuantileIsWithinAQuarterAboveTheSample(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 3, 4, 5, 7, 100, 1023, 1024, 1500 * time.Microsecond, 17 * time.Millisecond, 3 * time.Second} {
		var h Histogram
		h.Record(d)
		got := h.Snapshot().Quantile(0.99)
		if got < d || float64(got) > float64(d)*1.25+1 {
			t.Errorf("p99 of %d ns = %d ns, want within a quarter above it", d, got)
		}
		if h.Snapshot().Max() != got {
			t.Errorf("max of one sample %d != its quantile %d", h.Snapshot().Max(), got)
		}
	}
}

// The p99 of 99 short samples and one long is the short; the p99.9 the long.
// A snapshot's difference holds only what came after.
func TestQuantilesRankTheSamplesAndSnapshotsSubtract(t *testing.T) {
	var h Histogram
	h.Record(time.Hour)
	before := h.Snapshot()
	for range 999 {
		h.Record(time.Millisecond)
	}
	h.Record(time.Second)
	s := h.Snapshot().Sub(before)
	if s.Count() != 1000 {
		t.Fatalf("count %d, want 1000", s.Count())
	}
	if p := s.Quantile(0.99); p < time.Millisecond || p > 1250*time.Microsecond {
		t.Errorf("p99 %s, want about 1 ms", p)
	}
	if p := s.Quantile(1); p < time.Second || p > 1250*time.Millisecond {
		t.Errorf("p100 %s, want about 1 s", p)
	}
	var none *Histogram
	none.Record(time.Second)
	if none.Snapshot().Count() != 0 {
		t.Error("a nil histogram recorded")
	}
}

// The q-th quantile of n samples is the bucket of the ceil(q·n)-th smallest,
// with q·n taken as the exact product it stands for (0.07 × 100 is 7, not
// the 7.000000000000001 of floating point).
func TestAQuantileIsTheBucketOfTheCeilingRank(t *testing.T) {
	hundred := make([]uint64, 100)
	for i := range hundred {
		hundred[i] = 1
	}
	for _, tc := range []struct {
		name   string
		counts []uint64
		q      float64
		want   int
		ok     bool
	}{
		{"no samples", []uint64{0, 0}, 0.99, 0, false},
		{"the 7th of 100", hundred, 0.07, 6, true},
		{"the 29th of 100", hundred, 0.29, 28, true},
		{"the 99th of 100", hundred, 0.99, 98, true},
		{"the greatest", hundred, 1, 99, true},
		{"a rank below one is the first", []uint64{0, 3, 1}, 0.0001, 1, true},
		{"p99 of 98 short and 2 long", []uint64{98, 1, 1}, 0.99, 1, true},
	} {
		got, ok := QuantileBucket(tc.counts, tc.q)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: bucket %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
