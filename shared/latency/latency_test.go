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
