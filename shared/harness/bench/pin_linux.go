package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// pinning keeps the load generator off the server's cores: on one machine
// the two otherwise preempt each other, and a request's tail then measures
// the client's scheduling as much as the server's. The process's threads
// (the server's) are confined to every allowed CPU but the last, and each
// load worker locks itself to a thread on the last. With fewer than two
// allowed CPUs nothing is pinned.
type pinning struct {
	all, server unix.CPUSet
	client      int
}

// newPinning reports whether the process may pin, and how.
func newPinning() (*pinning, bool) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil || all.Count() < 2 {
		return nil, false
	}
	p := &pinning{all: all, server: all, client: -1}
	for cpu := len(all)*64 - 1; cpu >= 0; cpu-- {
		if all.IsSet(cpu) {
			p.client = cpu
			break
		}
	}
	p.server.Clear(p.client)
	return p, true
}

// confineServer sets every thread of the process to the server's CPUs;
// threads made later inherit it from the thread that makes them. The
// process keeps a P for every allowed CPU: left to itself, the runtime
// follows its threads' affinity within a second or two and would run the
// server and the load workers on the server's CPUs' count of Ps, so that a
// worker, its thread pinned apart, waits for the server to yield a P.
func (p *pinning) confineServer() {
	runtime.GOMAXPROCS(p.all.Count())
	p.setAll(&p.server)
}

// release gives every thread back every allowed CPU, and GOMAXPROCS back to
// the runtime.
func (p *pinning) release() {
	p.setAll(&p.all)
	runtime.SetDefaultGOMAXPROCS()
}

func (p *pinning) setAll(set *unix.CPUSet) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = unix.SchedSetaffinity(tid, set)
		}
	}
}

// clientThread locks the calling goroutine to its thread and that thread to
// the client's CPU. The goroutine must end without unlocking, so that the
// runtime ends the thread rather than hand it to the server.
func (p *pinning) clientThread() {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(p.client)
	_ = unix.SchedSetaffinity(0, &set)
}

// describe names the split for the report.
func (p *pinning) describe() string {
	return "server on CPUs " + cpuList(&p.server) + ", load generator on CPU " + strconv.Itoa(p.client)
}

func cpuList(set *unix.CPUSet) string {
	s := ""
	for cpu := range len(set) * 64 {
		if set.IsSet(cpu) {
			if s != "" {
				s += ","
			}
			s += strconv.Itoa(cpu)
		}
	}
	return s
}

// confineClient sets every thread of the process to the client's CPU, on
// one P: the server-alone run, whose servers are other processes.
func (p *pinning) confineClient() {
	var set unix.CPUSet
	set.Set(p.client)
	runtime.GOMAXPROCS(1)
	p.setAll(&set)
}

// clientCPU names the load generator's CPU.
func (p *pinning) clientCPU() string { return strconv.Itoa(p.client) }

// serverCPUs lists the server's CPUs as confineTo reads them ("0,2").
func (p *pinning) serverCPUs() string { return cpuList(&p.server) }

// confineTo sets every thread of the process to the CPUs listed ("0,2"),
// on a P for each: a child server, before it serves, as if started with
// only those CPUs allowed.
func confineTo(cpus string) error {
	var set unix.CPUSet
	for _, f := range strings.Split(cpus, ",") {
		cpu, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("bench: CPU list %q: %w", cpus, err)
		}
		set.Set(cpu)
	}
	runtime.GOMAXPROCS(set.Count())
	(&pinning{}).setAll(&set)
	return nil
}

// preciseSleeps sets the calling thread's timer slack to a nanosecond, so
// that its sleeps end when asked rather than up to 50 µs later.
func preciseSleeps() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }

// preciseSleep blocks the calling thread for d in the kernel, not in Go's
// timers.
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
