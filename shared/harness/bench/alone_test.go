package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for functions/local when the
// server-alone run re-executes it as a child server: "bench" first, as
// go test never passes it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "bench" {
		if err := Main(os.Stdout, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Every server-alone load is answered by a child process, not this one,
// and its CPU is that process's: each load has requests in every round and
// server CPU over the rounds (a round's may be under /proc's 10 ms tick on
// a busy machine), while the load generator's own CPU is not counted in it.
func TestTheServerAloneRunCountsEachServerProcesssCPUApartFromTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads child servers")
	}
	o := options{duration: time.Second, concurrency: 2, rounds: 2, trace: filepath.Join(t.TempDir(), "read.trace")}
	run, err := measureAlone(context.Background(), t.TempDir(), o, "")
	if err != nil {
		t.Fatal(err)
	}
	// -trace is the API child's runtime trace of the first audited read.
	if tr, err := os.ReadFile(o.trace); err != nil || !bytes.HasPrefix(tr, []byte("go 1.")) || len(tr) < 1024 {
		t.Errorf("trace: %d bytes (%v), want the child's runtime trace", len(tr), err)
	}
	if len(run.rounds) != o.rounds {
		t.Fatalf("%d rounds, want %d", len(run.rounds), o.rounds)
	}
	for _, name := range aloneOrder {
		var cpu time.Duration
		for i, round := range run.rounds {
			res := round[name]
			if len(res.Latencies) == 0 || res.Errors != 0 {
				t.Errorf("round %d, %s: %d requests, %d errors (%s)", i, name, len(res.Latencies), res.Errors, res.FirstError)
			}
			cpu += res.ServerCPU
		}
		if cpu <= 0 {
			t.Errorf("%s: server CPU %s over the rounds, want the child's", name, cpu)
		}
	}
	r := aloneReport(o, run)
	for _, name := range aloneOrder {
		f := r.Load[name]
		if c := f.ServerCPUMicrosPerRequest; c.Max <= 0 || c.Min > c.Median || c.Max < c.Median {
			t.Errorf("%s: server CPU per request %+v, want a median within its spread", name, c)
		}
		if f.P50Micros <= 0 || f.P99Micros < f.P50Micros || f.P999Micros < f.P99Micros {
			t.Errorf("%s: p50 %.0f, p99 %.0f, p99.9 %.0f µs, want them rising", name, f.P50Micros, f.P99Micros, f.P999Micros)
		}
	}
	if tail := r.ReadP99OverP50; tail.Min < 1 || tail.Min > tail.Median || tail.Max < tail.Median {
		t.Errorf("audited read's p99 over p50 %+v, want at least 1, a median within its spread", tail)
	}
	// The stalls are the child's: only the API child's audit recorder
	// writes a journal, and only the audited read makes it write.
	if s := r.Load[loadRead]; s.JournalAppendWriteP99Micros <= 0 || s.FlushCommits == 0 {
		t.Errorf("audited read: journal write(2) p99 %.0f µs, %d flusher commits; want the API child's recorder's", s.JournalAppendWriteP99Micros, s.FlushCommits)
	}
	for _, name := range []string{loadPlain, loadBare, loadReadNoAudit} {
		if s := r.Load[name]; s.JournalAppendWriteP99Micros != 0 {
			t.Errorf("%s: journal write(2) p99 %.0f µs, want none", name, s.JournalAppendWriteP99Micros)
		}
	}
}

// With -rate every server-alone load is an open loop: each round sends the
// requests due in its share of the time, no more and no fewer, whatever
// each server answers at.
func TestTheServerAloneRunAtARateSendsEveryRequestDue(t *testing.T) {
	if testing.Short() {
		t.Skip("loads child servers")
	}
	o := options{duration: 400 * time.Millisecond, concurrency: 4, rounds: 2, rate: 500}
	run, err := measureAlone(context.Background(), t.TempDir(), o, "")
	if err != nil {
		t.Fatal(err)
	}
	r := aloneReport(o, run)
	for _, name := range aloneOrder {
		if f := r.Load[name]; f.Requests != 200 || f.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors; want the 100 due in each round's 200 ms at 500 a second", name, f.Requests, f.Errors)
		}
	}
	if r.Rate != 500 {
		t.Errorf("report's rate %g, want 500", r.Rate)
	}
}

// A child's CPU is read from /proc: a process that spins until getrusage
// counts 50 ms more CPU has about that much more in /proc/<pid>/stat, to
// its 10 ms tick.
func TestAProcesssCPUIsReadFromProcInTicks(t *testing.T) {
	before, err := pidCPU(os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	used := processCPU()
	for processCPU()-used < 50*time.Millisecond {
	}
	spun := processCPU() - used
	after, err := pidCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := after - before; got < spun-20*time.Millisecond || got > spun+20*time.Millisecond {
		t.Errorf("/proc counted %s over %s of CPU, want it within two ticks", got, spun)
	}
}

// The API child is the local server's process, configured as
// functions/local configures it: its access lines leave the CloudWatch
// metric block out, as the local server's do, unless LOG_EMF=true (the
// report says which), and its audit blocks are deflated by the injected
// deflater.
func TestTheServerAloneAPIIsConfiguredAsTheLocalServer(t *testing.T) {
	for _, tc := range []struct {
		logEMF string
		block  bool
	}{{"", false}, {"false", false}, {"true", true}} {
		t.Run("LOG_EMF="+tc.logEMF, func(t *testing.T) {
			t.Setenv("LOG_EMF", tc.logEMF)
			t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
			cfg, err := aloneConfig(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Backend != "embedded" || cfg.NoMetrics == tc.block || cfg.BlockDeflater == nil {
				t.Errorf("config: backend %q, no metrics %v, block deflater injected %v; want embedded, %v, true",
					cfg.Backend, cfg.NoMetrics, cfg.BlockDeflater != nil, !tc.block)
			}
			if got := aloneReport(options{}, aloneRun{}).MetricBlock; got != tc.block {
				t.Errorf("report's metricBlock = %v, want %v", got, tc.block)
			}
		})
	}
}
