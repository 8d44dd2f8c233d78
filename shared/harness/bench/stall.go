package bench

import (
	"io"
	"math"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"platformapi/shared/base/latency"
	"platformapi/shared/domain/audit"
)

// Where a load's tail may go, each measured over the load alone: the Go
// scheduler's latency (a runnable goroutine waiting for a thread), the
// collector's stop-the-world pauses, and the embedded audit recorder's
// steps (a request's wait for the journal's lock and its write(2), the
// syncer's fsync, the flusher's commit with its fsync).
type stalls struct {
	SchedLatencyP99 time.Duration
	SchedLatencyMax time.Duration
	GCPauseP99      time.Duration
	GCPauseMax      time.Duration
	GCPauses        uint64

	JournalAppendWaitP99  time.Duration
	JournalAppendWriteP99 time.Duration
	JournalAppendWriteMax time.Duration
	JournalSyncP99        time.Duration
	JournalSyncMax        time.Duration
	FlushCommitP99        time.Duration
	FlushCommitMax        time.Duration
	FlushCommits          uint64
}

// The runtime's histograms the stalls read. /gc/pauses:seconds is the
// stop-the-world pauses of the collector (deprecated for
// /sched/pauses/total/gc:seconds in newer runtimes; both hold the same).
const (
	metricSchedLatency = "/sched/latencies:seconds"
	metricGCPauses     = "/gc/pauses:seconds"
)

// stallProbe is the counts at a load's start.
type stallProbe struct {
	runtime []metrics.Sample
	audit   [4]latency.Snapshot
	rec     *audit.Timings
}

func startStalls(rec *audit.Timings) stallProbe {
	p := stallProbe{runtime: []metrics.Sample{{Name: metricSchedLatency}, {Name: metricGCPauses}}, rec: rec}
	metrics.Read(p.runtime)
	p.audit = snapshots(rec)
	return p
}

func snapshots(t *audit.Timings) [4]latency.Snapshot {
	if t == nil {
		return [4]latency.Snapshot{}
	}
	return [4]latency.Snapshot{t.AppendWait.Snapshot(), t.AppendWrite.Snapshot(), t.Sync.Snapshot(), t.Commit.Snapshot()}
}

// stop is what happened since the probe started.
func (p stallProbe) stop() stalls {
	now := []metrics.Sample{{Name: metricSchedLatency}, {Name: metricGCPauses}}
	metrics.Read(now)
	var s stalls
	if h, ok := histogramSince(p.runtime[0], now[0]); ok {
		s.SchedLatencyP99, s.SchedLatencyMax = h.quantile(0.99), h.quantile(1)
	}
	if h, ok := histogramSince(p.runtime[1], now[1]); ok {
		s.GCPauseP99, s.GCPauseMax, s.GCPauses = h.quantile(0.99), h.quantile(1), h.total()
	}
	a := snapshots(p.rec)
	for i := range a {
		a[i] = a[i].Sub(p.audit[i])
	}
	s.JournalAppendWaitP99 = a[0].Quantile(0.99)
	s.JournalAppendWriteP99, s.JournalAppendWriteMax = a[1].Quantile(0.99), a[1].Max()
	s.JournalSyncP99, s.JournalSyncMax = a[2].Quantile(0.99), a[2].Max()
	s.FlushCommitP99, s.FlushCommitMax, s.FlushCommits = a[3].Quantile(0.99), a[3].Max(), a[3].Count()
	return s
}

// worst is the greater of each figure of s and o: a merged run's stalls.
func (s stalls) worst(o stalls) stalls {
	return stalls{
		SchedLatencyP99: max(s.SchedLatencyP99, o.SchedLatencyP99), SchedLatencyMax: max(s.SchedLatencyMax, o.SchedLatencyMax),
		GCPauseP99: max(s.GCPauseP99, o.GCPauseP99), GCPauseMax: max(s.GCPauseMax, o.GCPauseMax), GCPauses: s.GCPauses + o.GCPauses,
		JournalAppendWaitP99:  max(s.JournalAppendWaitP99, o.JournalAppendWaitP99),
		JournalAppendWriteP99: max(s.JournalAppendWriteP99, o.JournalAppendWriteP99), JournalAppendWriteMax: max(s.JournalAppendWriteMax, o.JournalAppendWriteMax),
		JournalSyncP99: max(s.JournalSyncP99, o.JournalSyncP99), JournalSyncMax: max(s.JournalSyncMax, o.JournalSyncMax),
		FlushCommitP99: max(s.FlushCommitP99, o.FlushCommitP99), FlushCommitMax: max(s.FlushCommitMax, o.FlushCommitMax),
		FlushCommits: s.FlushCommits + o.FlushCommits,
	}
}

// runtimeHistogram is the difference of two readings of one of the
// runtime's histograms.
type runtimeHistogram struct {
	counts  []uint64
	buckets []float64 // seconds; len(counts)+1 boundaries
}

func histogramSince(before, after metrics.Sample) (runtimeHistogram, bool) {
	if before.Value.Kind() != metrics.KindFloat64Histogram || after.Value.Kind() != metrics.KindFloat64Histogram {
		return runtimeHistogram{}, false
	}
	b, a := before.Value.Float64Histogram(), after.Value.Float64Histogram()
	if len(a.Counts) != len(b.Counts) {
		return runtimeHistogram{}, false
	}
	h := runtimeHistogram{counts: make([]uint64, len(a.Counts)), buckets: a.Buckets}
	for i := range a.Counts {
		h.counts[i] = a.Counts[i] - b.Counts[i]
	}
	return h, true
}

func (h runtimeHistogram) total() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// quantile is the upper boundary of the bucket holding the q-th quantile
// (its lower one for the last, unbounded bucket); zero without samples.
func (h runtimeHistogram) quantile(q float64) time.Duration {
	i, ok := latency.QuantileBucket(h.counts, q)
	if !ok {
		return 0
	}
	edge := h.buckets[i+1]
	if math.IsInf(edge, 1) {
		edge = h.buckets[i]
	}
	return time.Duration(edge * float64(time.Second))
}

// startTrace writes a runtime/trace to path until the returned func is
// called.
func startTrace(path string) (func() error, error) {
	return capture(path, trace.Start, trace.Stop)
}

// startProfile writes a CPU profile to path until the returned func is
// called.
func startProfile(path string) (func() error, error) {
	return capture(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// capture starts writing what start writes into a new file at path; the
// func it returns stops it and closes the file.
func capture(path string, start func(io.Writer) error, stop func()) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error { stop(); return f.Close() }, nil
}
