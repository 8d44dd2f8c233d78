package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// load is a closed-loop load: a fixed number of workers, each sending its
// next request as soon as the previous one is answered, for a fixed time.
// Closed loop keeps the comparison fair on a small machine: both endpoints
// get exactly the same concurrency, and neither can be driven past what the
// machine serves.
//
// With a rate it is an open-loop load instead: requests are due at fixed
// times, rate a second, whatever the answers do, as users' requests
// arrive; the workers take the due times in turn and each latency counts
// from the request's due time, so a request sent late because the server
// was stalled counts its wait (closed loop sends fewer requests during a
// stall and hides it). A server that cannot keep up with the rate shows
// latencies that grow through the run.
//
// Each worker keeps its own connection and speaks HTTP/1.1 on it itself
// (http.Request.Write, http.ReadResponse): no transport goroutines, so a
// pinned worker's whole client side runs on the client's CPU.
type load struct {
	method, url string
	header      http.Header
	concurrency int
	// body, when set, makes request i's body and sets its headers: an
	// idempotent write needs a fresh Idempotency-Key every time.
	body func(i int64, h http.Header) string
	// want is the status that counts as success (200 when zero).
	want int
	// rate, when above zero, is the open loop's requests a second.
	rate float64
	seq  *atomic.Int64
	// pin, when set, keeps the workers on the client's CPU.
	pin *pinning
}

// result is one load run: every successful request's latency, sorted, and
// the CPU time the whole process (server and client alike) spent meanwhile.
type result struct {
	Latencies  []time.Duration
	Errors     int
	FirstError string
	Elapsed    time.Duration
	CPU        time.Duration
	// AuditTail is, for an audited load on embedded storage, the longest an
	// answered request's event was on no disk (audit.Recorder.LossWindow).
	AuditTail time.Duration
	// Stalls are where the run's tail may have gone.
	Stalls stalls
}

// CPUPerRequest is the process's CPU time over the requests answered: the
// load client's share is in it too, the same for every endpoint, so the
// difference between two endpoints is what the server does differently.
func (r result) CPUPerRequest() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.CPU / time.Duration(len(r.Latencies))
}

// processCPU is the user plus system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// merge is r and o as one run: their requests, errors, time and CPU
// together, the longest audit tail.
func (r result) merge(o result) result {
	m := result{
		Latencies: slices.Concat(r.Latencies, o.Latencies), Errors: r.Errors + o.Errors, FirstError: r.FirstError,
		Elapsed: r.Elapsed + o.Elapsed, CPU: r.CPU + o.CPU, AuditTail: max(r.AuditTail, o.AuditTail),
		Stalls: r.Stalls.worst(o.Stalls),
	}
	if m.FirstError == "" {
		m.FirstError = o.FirstError
	}
	slices.Sort(m.Latencies)
	return m
}

// RPS is successful requests per second of wall time.
func (r result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of the
// latencies; zero when there are none.
func (r result) Percentile(p float64) time.Duration { return percentile(r.Latencies, p) }

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// run sends requests for d and records each answer's latency. Only
// answers with the wanted status count; anything else is an error, because
// a benchmark of refusals would measure the wrong path.
func (l load) run(ctx context.Context, d time.Duration) result {
	type worker struct {
		lat      []time.Duration
		errors   int
		firstErr string
	}
	workers := make([]worker, l.concurrency)
	var due chan time.Time
	if l.rate > 0 {
		due = make(chan time.Time, 1024)
	}
	var wg, ready sync.WaitGroup
	begin := make(chan struct{})
	for i := range workers {
		wg.Add(1)
		ready.Add(1)
		go func(w *worker) {
			defer wg.Done()
			if l.pin != nil {
				l.pin.clientThread()
			}
			var c conn
			defer c.close()
			ready.Done()
			<-begin
			deadline := time.Now().Add(d)
			for ctx.Err() == nil {
				var t0 time.Time
				if due != nil {
					var ok bool
					if t0, ok = <-due; !ok {
						break
					}
				} else if t0 = time.Now(); !t0.Before(deadline) {
					break
				}
				err := l.once(ctx, &c)
				if err != nil {
					c.close()
					w.errors++
					if w.firstErr == "" {
						w.firstErr = err.Error()
					}
					continue
				}
				w.lat = append(w.lat, time.Since(t0))
			}
		}(&workers[i])
	}
	ready.Wait()
	cpu0, start := processCPU(), time.Now()
	if l.rate > 0 {
		go pace(ctx, due, start, start.Add(d), l.rate)
	}
	close(begin)
	wg.Wait()
	r := result{Elapsed: time.Since(start), CPU: processCPU() - cpu0}
	for _, w := range workers {
		r.Latencies = append(r.Latencies, w.lat...)
		r.Errors += w.errors
		if r.FirstError == "" {
			r.FirstError = w.firstErr
		}
	}
	slices.Sort(r.Latencies)
	return r
}

// pace sends an open loop's due times, rate a second from start until
// deadline, then closes due. It sleeps on a thread of its own with the
// kernel's timer slack at its least (preciseSleep): Go's timers wake a
// process whose goroutines all wait only to the millisecond (the network
// poller's epoll timeout), which would add up to a millisecond to every
// latency of a light load. A due time is sent when it comes even while
// every worker is busy; the latency of its request counts from it.
func pace(ctx context.Context, due chan<- time.Time, start, deadline time.Time, rate float64) {
	defer close(due)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	preciseSleeps()
	every := float64(time.Second) / rate
	for n := 0; ; n++ {
		at := start.Add(time.Duration(float64(n) * every))
		if !at.Before(deadline) {
			return
		}
		if d := time.Until(at); d > 0 {
			preciseSleep(d)
		}
		select {
		case due <- at:
		case <-ctx.Done():
			return
		}
	}
}

// conn is one worker's connection, dialled on first use and again after an
// error.
type conn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func (c *conn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
}

// once sends one request and reads the whole answer, as a client would.
func (l load) once(ctx context.Context, c *conn) error {
	header := l.header.Clone()
	var payload io.Reader
	if l.body != nil {
		payload = strings.NewReader(l.body(l.seq.Add(1), header))
	}
	method := l.method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, l.url, payload)
	if err != nil {
		return err
	}
	req.Header = header
	if c.c == nil {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", req.URL.Host)
		if err != nil {
			return err
		}
		c.c, c.br, c.bw = nc, bufio.NewReader(nc), bufio.NewWriter(nc)
	}
	if err := req.Write(c.bw); err != nil {
		return err
	}
	if err := c.bw.Flush(); err != nil {
		return err
	}
	res, err := http.ReadResponse(c.br, req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return err
	}
	if res.Close {
		c.close()
	}
	want := l.want
	if want == 0 {
		want = http.StatusOK
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s: %d %s", l.url, res.StatusCode, body)
	}
	return nil
}

// warm readies every load of loads at concurrency: one request each (a
// failure ends the run before anything is measured), then warmup of load.
func warm(ctx context.Context, loads map[string]load, concurrency int, warmup time.Duration) error {
	for name, l := range loads {
		l.concurrency, l.seq = concurrency, new(atomic.Int64)
		var c conn
		err := l.once(ctx, &c)
		c.close()
		if err != nil {
			return err
		}
		l.run(ctx, warmup)
		loads[name] = l
	}
	return nil
}

// inRound is the order the loads run in, round by round: order, then
// reversed (ABBA), so that a drift of the machine falls on both sides of
// every ratio.
func inRound(order []string, round int) []string {
	out := slices.Clone(order)
	if round%2 == 1 {
		slices.Reverse(out)
	}
	return out
}
