// Package latency keeps histograms of durations cheap enough for a request
// path: one atomic add per sample, no lock, no allocation. The benchmark
// reads them to tell where a request's tail went (a journal's write or
// fsync, a flusher's commit).
package latency

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// sub is how many buckets split each power of two: a quantile is then within
// 1/sub (25%) of the true value.
const (
	subBits = 2
	sub     = 1 << subBits
	buckets = 64 * sub
)

// Histogram counts durations in buckets of a quarter of a power of two of
// nanoseconds. The zero value is ready; a nil *Histogram records nothing.
type Histogram struct {
	counts [buckets]atomic.Uint64
}

// Record counts one duration.
func (h *Histogram) Record(d time.Duration) {
	if h == nil {
		return
	}
	h.counts[bucket(d)].Add(1)
}

// Since counts the time since t0.
func (h *Histogram) Since(t0 time.Time) {
	if h == nil {
		return
	}
	h.Record(time.Since(t0))
}

func bucket(d time.Duration) int {
	n := uint64(max(d, 0))
	if n < sub {
		return int(n)
	}
	exp := bits.Len64(n) - 1 // n is in [2^exp, 2^(exp+1))
	frac := (n >> (exp - subBits)) & (sub - 1)
	return (exp-subBits+1)*sub + int(frac)
}

// upper is the greatest duration bucket i holds.
func upper(i int) time.Duration {
	if i < sub {
		return time.Duration(i)
	}
	exp := i/sub + subBits - 1
	frac := uint64(i % sub)
	lo := (uint64(sub) + frac) << (exp - subBits)
	return time.Duration(lo + (uint64(1) << (exp - subBits)) - 1)
}

// Snapshot is a histogram's counts at one moment.
type Snapshot struct {
	counts [buckets]uint64
}

// Snapshot reads the counts (each atomically; samples recorded meanwhile
// may be in it or not).
func (h *Histogram) Snapshot() Snapshot {
	var s Snapshot
	if h == nil {
		return s
	}
	for i := range h.counts {
		s.counts[i] = h.counts[i].Load()
	}
	return s
}

// Sub is the samples of s not in an earlier snapshot of the same histogram.
func (s Snapshot) Sub(earlier Snapshot) Snapshot {
	for i := range s.counts {
		s.counts[i] -= earlier.counts[i]
	}
	return s
}

// Count is how many samples s holds.
func (s Snapshot) Count() uint64 {
	var n uint64
	for _, c := range s.counts {
		n += c
	}
	return n
}

// Quantile is the upper bound of the bucket that holds the q-th quantile
// (0 < q ≤ 1) of the samples, zero when there are none.
func (s Snapshot) Quantile(q float64) time.Duration {
	i, ok := QuantileBucket(s.counts[:], q)
	if !ok {
		return 0
	}
	return upper(i)
}

// QuantileBucket is the index of the bucket of counts that holds the q-th
// quantile (0 < q ≤ 1): the bucket of the ceil(q·n)-th smallest of the n
// samples, false when there are none. It is the one rank rule of every
// histogram the benchmark reads, ours and the runtime's, so their tails
// compare. The product q·n is rounded before its ceiling is taken: 0.07 × 100
// is 7.000000000000001 in floating point, and the 7th sample, not the 8th,
// is the 7th percentile of 100.
func QuantileBucket(counts []uint64, q float64) (int, bool) {
	var n uint64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(q*float64(n) - 1e-9))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			return i, true
		}
	}
	return len(counts) - 1, true
}

// Max is the upper bound of the highest bucket with a sample.
func (s Snapshot) Max() time.Duration {
	for i := buckets - 1; i >= 0; i-- {
		if s.counts[i] > 0 {
			return upper(i)
		}
	}
	return 0
}
