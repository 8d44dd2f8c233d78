package bench

import (
	"testing"

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
