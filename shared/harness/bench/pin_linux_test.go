package bench

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Once the server is confined, a thread of the process runs on the server's
// CPUs only, and a load worker's thread on the client's CPU only; release
// gives the threads every CPU back.
func TestThePinnedLoadGeneratorAndTheServerShareNoCPU(t *testing.T) {
	p, ok := newPinning()
	if !ok {
		t.Skip("fewer than two CPUs allowed")
	}
	p.confineServer()
	defer p.release()
	affinity := func() unix.CPUSet {
		var s unix.CPUSet
		if err := unix.SchedGetaffinity(0, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := affinity(); got != p.server || got.IsSet(p.client) {
		t.Errorf("server thread on %s, want %s", cpuList(&got), cpuList(&p.server))
	}
	client := make(chan unix.CPUSet)
	go func() {
		p.clientThread()
		client <- affinity()
	}()
	if got := <-client; got.Count() != 1 || !got.IsSet(p.client) {
		t.Errorf("client thread on %s, want %d", cpuList(&got), p.client)
	}
	p.release()
	if got := affinity(); got != p.all {
		t.Errorf("released thread on %s, want %s", cpuList(&got), cpuList(&p.all))
	}
}

// The runtime follows the affinity of the process's threads: confined to
// the server's CPUs, it would soon run every goroutine on that many Ps, the
// load workers' included, and a worker would wait for the server to give
// up the P before it could send its next request. Confined, the process
// keeps a P for each CPU it was allowed, the server's and the client's.
func TestThePinnedProcessKeepsAPForTheLoadGenerator(t *testing.T) {
	p, ok := newPinning()
	if !ok {
		t.Skip("fewer than two CPUs allowed")
	}
	// The test binary fixed GOMAXPROCS (-test.cpu); the bench's binary
	// leaves it to the runtime, which then follows the affinity.
	before := runtime.GOMAXPROCS(0)
	runtime.SetDefaultGOMAXPROCS()
	defer runtime.GOMAXPROCS(before)
	p.confineServer()
	// The runtime looks at the affinity every second or so.
	time.Sleep(3 * time.Second)
	got := runtime.GOMAXPROCS(0)
	p.release()
	if want := p.all.Count(); got != want {
		t.Errorf("GOMAXPROCS %d while confined, want %d (one P for each allowed CPU)", got, want)
	}
	if after := runtime.GOMAXPROCS(0); after != p.all.Count() {
		t.Errorf("GOMAXPROCS %d after release, want %d, the runtime's default again", after, p.all.Count())
	}
}
