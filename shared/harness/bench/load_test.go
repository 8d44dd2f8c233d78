package bench

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The loads alternate in rounds and every round measures every load, so
// each ratio has a spread; each load reports its p99.9, a plain net/http
// server is measured beside the API, and the audited reads' disk growth is
// counted. Figures are not judged: the machine is shared.
func TestTheLoadsAlternateInRoundsAndEveryRatioHasItsSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a server")
	}
	o := options{duration: 400 * time.Millisecond, warmup: 0, concurrency: 2, rounds: 2}
	run, err := measureLoad(context.Background(), filepath.Join(t.TempDir(), "load"), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.rounds) != o.rounds {
		t.Fatalf("%d rounds, want %d", len(run.rounds), o.rounds)
	}
	for i, round := range run.rounds {
		for _, name := range loadOrder {
			res := round[name]
			if len(res.Latencies) == 0 || res.Errors != 0 {
				t.Errorf("round %d, %s: %d requests, %d errors (%s)", i, name, len(res.Latencies), res.Errors, res.FirstError)
			}
		}
	}
	for _, name := range loadOrder {
		want := 0
		for _, round := range run.rounds {
			want += len(round[name].Latencies)
		}
		if got := len(run.merged[name].Latencies); got != want {
			t.Errorf("%s merged: %d requests, want every round's %d", name, got, want)
		}
		if !slices.IsSorted(run.merged[name].Latencies) {
			t.Errorf("%s merged: latencies not sorted", name)
		}
	}
	if run.auditedReads != len(run.merged[loadRead].Latencies) || run.auditedGrowth <= 0 {
		t.Errorf("audited growth %d bytes over %d reads, want the audited loads' requests and some growth", run.auditedGrowth, run.auditedReads)
	}
	// Each audited request writes the journal; its fsyncs and commits run
	// on tickers a short load on a busy machine may not see
	// (TestTheStallProbeTimesTheRecordersWritesSyncsAndCommits waits for them).
	if st := run.merged[loadRead].Stalls; st.JournalAppendWriteMax <= 0 {
		t.Errorf("audited read stalls %+v, want the journal's writes timed", st)
	}
	if st := run.merged[loadReadNoAudit].Stalls; st.JournalAppendWriteMax != 0 {
		t.Errorf("unaudited read stalls %+v, want no journal write", st)
	}
	r := report(o, measurements{load: run.merged, loadRun: run})
	if r.PlainNetHTTP.Requests == 0 || r.P999Micros < r.P99Micros || r.DataDirBytesPerMillionAudited <= 0 {
		t.Errorf("plain %+v, p99.9 %g < p99 %g, growth %g a million", r.PlainNetHTTP, r.P999Micros, r.P99Micros, r.DataDirBytesPerMillionAudited)
	}
	for _, name := range spreadOrder {
		sp, ok := r.RatioSpread[name]
		if !ok || sp.Min > sp.Max || sp.Min <= 0 {
			t.Errorf("%s: spread %+v", name, sp)
		}
	}
}

// The merged run of two is their requests, errors, time and CPU together.
func TestAMergedRunIsBothRunsTogether(t *testing.T) {
	a := result{Latencies: []time.Duration{1, 5}, Errors: 1, Elapsed: time.Second, CPU: 3, AuditTail: 7}
	b := result{Latencies: []time.Duration{2, 9}, Errors: 2, FirstError: "x", Elapsed: time.Second, CPU: 4, AuditTail: 2}
	m := a.merge(b)
	if !slices.Equal(m.Latencies, []time.Duration{1, 2, 5, 9}) || m.Errors != 3 || m.FirstError != "x" ||
		m.Elapsed != 2*time.Second || m.CPU != 7 || m.AuditTail != 7 {
		t.Errorf("merged %+v", m)
	}
}

// A runtime histogram's quantile is the upper edge of the bucket that holds
// the rank, and the lower edge of the last, unbounded one.
func TestARuntimeHistogramsQuantileIsItsBucketsUpperEdge(t *testing.T) {
	h := runtimeHistogram{counts: []uint64{98, 1, 1}, buckets: []float64{0, 0.001, 0.01, math.Inf(1)}}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, time.Millisecond}, {0.99, 10 * time.Millisecond}, {1, 10 * time.Millisecond}} {
		if got := h.quantile(c.q); got != c.want {
			t.Errorf("q%g = %s, want %s", c.q, got, c.want)
		}
	}
	if got := (runtimeHistogram{counts: []uint64{0}, buckets: []float64{0, 1}}).quantile(0.99); got != 0 {
		t.Errorf("empty histogram q0.99 = %s, want 0", got)
	}
}

// The runtime's histograms rank as ours do: the 7th percentile of 100
// samples, one a millisecond bucket, is the 7th bucket's upper edge.
func TestARuntimeHistogramRanksAsTheLatencyHistogramsDo(t *testing.T) {
	h := runtimeHistogram{counts: make([]uint64, 100), buckets: make([]float64, 101)}
	for i := range h.counts {
		h.counts[i], h.buckets[i+1] = 1, float64(i+1)/1000
	}
	if got := h.quantile(0.07); got != 7*time.Millisecond {
		t.Errorf("q0.07 = %s, want 7ms", got)
	}
}

// An open loop sends every request due in its time, whatever the server
// does, and a request the server held up counts its wait from its due
// time: a stall of the whole server shows in the latency of every request
// due during it. A closed loop of the same connections sends fewer
// requests during the stall and counts about one slow request each.
func TestAnOpenLoopCountsAServerStallInEveryRequestDueDuringIt(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a server")
	}
	const stall = 200 * time.Millisecond
	var mu sync.Mutex
	var stallEnd time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Query().Has("stall") && stallEnd.IsZero() {
			stallEnd = time.Now().Add(stall)
		}
		end := stallEnd
		mu.Unlock()
		time.Sleep(time.Until(end))
	}))
	defer srv.Close()
	// 100 ms into each run a request from outside the load stalls the
	// server: every answer until the stall's end waits for it.
	run := func(rate float64) result {
		mu.Lock()
		stallEnd = time.Time{}
		mu.Unlock()
		l := load{url: srv.URL, header: http.Header{}, concurrency: 4, rate: rate, seq: new(atomic.Int64)}
		go func() {
			time.Sleep(100 * time.Millisecond)
			_, _ = http.Get(srv.URL + "?stall")
		}()
		return l.run(context.Background(), 600*time.Millisecond)
	}
	slow := func(r result) int {
		n := 0
		for _, d := range r.Latencies {
			if d >= 50*time.Millisecond {
				n++
			}
		}
		return n
	}
	open := run(1000)
	if open.Errors != 0 || len(open.Latencies) != 600 {
		t.Fatalf("open loop at 1,000 a second for 600 ms: %d requests, %d errors (%s), want every one of the 600 due", len(open.Latencies), open.Errors, open.FirstError)
	}
	// About 150 requests are due in the stall's first 150 ms, each
	// waiting at least 50 ms; a loaded machine may start it late.
	n := slow(open)
	if n < 100 {
		t.Errorf("open loop: %d requests took 50 ms or more, want the ~150 due early in the 200 ms stall", n)
	}
	// The closed loop's four connections each wait out the stall once;
	// a busy machine's own hiccups may add a few more.
	closed := run(0)
	if c := slow(closed); c > n/4 || closed.Errors != 0 {
		t.Errorf("closed loop of 4: %d requests took 50 ms or more (%d errors), want about one a connection, far fewer than the open loop's %d", c, closed.Errors, n)
	}
}
