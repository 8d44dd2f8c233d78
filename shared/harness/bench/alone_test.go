package bench

import (
	"context"
	"fmt"
	"os"
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
// and its CPU is that process's: each load has requests and server CPU in
// every round, while the load generator's own CPU is not counted in it.
func TestTheServerAloneRunCountsEachServerProcesssCPUApartFromTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads child servers")
	}
	o := options{duration: 600 * time.Millisecond, concurrency: 2, rounds: 2}
	run, err := measureAlone(context.Background(), t.TempDir(), o, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(run.rounds) != o.rounds {
		t.Fatalf("%d rounds, want %d", len(run.rounds), o.rounds)
	}
	for i, round := range run.rounds {
		for _, name := range aloneOrder {
			res := round[name]
			if len(res.Latencies) == 0 || res.Errors != 0 {
				t.Errorf("round %d, %s: %d requests, %d errors (%s)", i, name, len(res.Latencies), res.Errors, res.FirstError)
			}
			if res.ServerCPU <= 0 {
				t.Errorf("round %d, %s: server CPU %s, want the child's", i, name, res.ServerCPU)
			}
		}
	}
	r := aloneReport(o, run)
	for _, name := range aloneOrder {
		if c := r.Load[name].ServerCPUMicrosPerRequest; c.Median <= 0 || c.Min > c.Median || c.Max < c.Median {
			t.Errorf("%s: server CPU per request %+v, want a median within its spread", name, c)
		}
	}
	if h := r.BareCPUOverPlainNetHTTP; h.Median <= 0 {
		t.Errorf("health over plain %+v, want a ratio", h)
	}
}

// A child's CPU is read from /proc: a process that spins for a while has
// at least that much CPU a moment later.
func TestAProcesssCPUIsReadFromProcInTicks(t *testing.T) {
	before, err := pidCPU(os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := pidCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 30*time.Millisecond {
		t.Errorf("CPU grew %s over 50 ms of spinning, want most of it", after-before)
	}
}
