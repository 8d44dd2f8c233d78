package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// load is a closed-loop load: a fixed number of workers, each sending its
// next request as soon as the previous one is answered, for a fixed time.
// Closed loop keeps the comparison fair on a small machine: both endpoints
// get exactly the same concurrency, and neither can be driven past what the
// machine serves.
type load struct {
	client      *http.Client
	url         string
	header      http.Header
	concurrency int
}

// result is one load run: every successful request's latency, sorted.
type result struct {
	Latencies  []time.Duration
	Errors     int
	FirstError string
	Elapsed    time.Duration
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

// run sends requests for d and records each answer's latency. Only 200s
// count; anything else is an error, because a benchmark of refusals would
// measure the wrong path.
func (l load) run(ctx context.Context, d time.Duration) result {
	deadline := time.Now().Add(d)
	type worker struct {
		lat      []time.Duration
		errors   int
		firstErr string
	}
	workers := make([]worker, l.concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				err := l.once(ctx)
				if err != nil {
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
	wg.Wait()
	r := result{Elapsed: time.Since(start)}
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

// once sends one request and reads the whole answer, as a client would.
func (l load) once(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return err
	}
	req.Header = l.header.Clone()
	res, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", l.url, res.StatusCode, body)
	}
	return nil
}
