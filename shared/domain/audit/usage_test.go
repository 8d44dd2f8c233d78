package audit_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
)

type sums struct{ requests, errors, micro int64 }

// traffic is n requests over 30 hours (across a UTC midnight) from every
// key of the tree, in and out of projects, with charges, refusals and
// idempotent replays.
func (w *world) traffic(n int) []audit.Event {
	rnd := rand.New(rand.NewPCG(13, uint64(n)))
	paths := [][]string{w.root, w.a, w.a1, w.b}
	projects := []string{"", "prj_one", "prj_two"}
	type call struct{ service, op string }
	calls := []call{
		{"cloud-superbrain", "services.invoke.cloud-superbrain.memory.write"},
		{"cloud-superbrain", "services.invoke.cloud-superbrain.memory.search"},
		{"", "projects.list"},
		{"", "auditEvents.list"},
	}
	statuses := []int{200, 200, 201, 402, 403, 429, 500}
	out := make([]audit.Event, n)
	for i := range out {
		c := calls[rnd.IntN(len(calls))]
		status := statuses[rnd.IntN(len(statuses))]
		var micro int64
		if c.service != "" && status < 400 {
			micro = int64(1+rnd.IntN(20)) * 1_000
		}
		at := t0.Add(time.Duration(rnd.Int64N(int64(30 * time.Hour))))
		out[i] = w.event(paths[rnd.IntN(len(paths))], projects[rnd.IntN(len(projects))], c.service, c.op, status, micro, at)
		if status == 201 {
			out[i].IdempotentReplayed, out[i].ChargedMicro = true, 0
		}
	}
	return out
}

// recordConcurrently records evs from eight goroutines.
func recordConcurrently(t *testing.T, rec *audit.Recorder, evs []audit.Event) {
	t.Helper()
	work := make(chan audit.Event)
	errs := make(chan error, len(evs))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for e := range work {
				errs <- rec.Record(context.Background(), e)
			}
		})
	}
	for _, e := range evs {
		work <- e
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// deliver applies evs as a stream would, retrying from the first uncounted
// event after a failure (a transaction conflict under concurrent delivery).
func deliver(t *testing.T, r *audit.Rollup, evs []audit.Event) {
	for tries := 0; len(evs) > 0; tries++ {
		n, err := r.Apply(context.Background(), evs)
		evs = evs[n:]
		if err != nil && (!errors.Is(err, store.ErrUnavailable) || tries > 20) {
			t.Error(err)
			return
		}
	}
}

func TestUsageAgreesExactlyWithTheAuditEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		n := 300
		if be.Name != teststores.Embedded.Name {
			n = 60 // the emulator serves one request at a time
		}
		for _, mode := range []string{"stream with redelivery", "embedded journal replayed after a kill", "embedded journal in one flush"} {
			t.Run(mode, func(t *testing.T) {
				w := newWorld(t, be)
				traffic := w.traffic(n)
				switch {
				case strings.HasPrefix(mode, "stream"):
					recordConcurrently(t, audit.NewRecorder(w.st, w.clock.Now), traffic)
				case strings.HasSuffix(mode, "one flush"):
					// Thirty hours of every key, project, service and
					// operation counted by one batch's counter updates.
					rec := embedded(t, w, t.TempDir())
					rec.StopFlusher()
					recordConcurrently(t, rec, traffic)
					if err := rec.Flush(context.Background()); err != nil {
						t.Fatal(err)
					}
				default:
					// Killed with everything still in its journal, which
					// is then replayed three times, twice at once.
					dir := t.TempDir()
					rec := embedded(t, w, dir)
					release := rec.HoldFlushes()
					recordConcurrently(t, rec, traffic)
					rec.Kill()
					release()
					copies := []string{copyDir(t, dir), copyDir(t, dir)}
					embedded(t, w, dir).Close()
					var wg sync.WaitGroup
					for _, c := range copies {
						wg.Go(func() {
							again, err := audit.NewEmbeddedRecorder(w.st, w.clock.Now, c)
							if err != nil {
								t.Error(err)
								return
							}
							again.Close()
						})
					}
					wg.Wait()
				}
				recorded := w.all(t, w.window(w.viewer(w.root, "")))
				if len(recorded) != n {
					t.Fatalf("listed %d events, recorded %d", len(recorded), n)
				}
				if strings.HasPrefix(mode, "stream") {
					// At-least-once delivery: everything, in two concurrent
					// overlapping streams, then a third of it once more.
					rollup := audit.NewRollup(w.st)
					var wg sync.WaitGroup
					wg.Go(func() { deliver(t, rollup, recorded) })
					wg.Go(func() { deliver(t, rollup, recorded[n/2:]) })
					wg.Wait()
					deliver(t, rollup, recorded[:n/3])
				}

				viewers := map[string]audit.Viewer{
					"root": w.viewer(w.root, ""), "a": w.viewer(w.a, ""), "b": w.viewer(w.b, ""),
					"a bound to prj_one": w.viewer(w.a, "prj_one"),
				}
				groupings := [][]string{nil, {audit.GroupProject}, {audit.GroupKey}, {audit.GroupService}, {audit.GroupOperation},
					{audit.GroupKey, audit.GroupOperation}, {audit.GroupProject, audit.GroupKey, audit.GroupService, audit.GroupOperation}}
				start, end := t0.Add(-4*time.Hour), t0.Add(44*time.Hour)
				var total int64
				for vname, v := range viewers {
					events := w.all(t, audit.Filter{Viewer: v, Since: start, Until: end, Limit: 100})
					for _, width := range []time.Duration{time.Hour, 24 * time.Hour} {
						for _, groupBy := range groupings {
							name := fmt.Sprintf("%s/%s/%v", vname, width, groupBy)
							got := w.usage(t, audit.UsageFilter{Viewer: v, Start: start, End: end, BucketWidth: width, GroupBy: groupBy})
							want := expected(events, width, groupBy)
							if !maps.Equal(got, want) {
								t.Errorf("%s: usage %v\n  events %v", name, got, want)
							}
							if vname == "root" && groupBy == nil {
								total = 0
								for _, s := range got {
									total += s.requests
								}
							}
						}
					}
				}
				if total != int64(n) {
					t.Fatalf("the root's usage counts %d requests, %d were made", total, n)
				}
			})
		}
	})
}

// usage reads every page of usage into sums per bucket start and group.
func (w *world) usage(t *testing.T, f audit.UsageFilter) map[string]sums {
	t.Helper()
	out := map[string]sums{}
	for {
		buckets, next, err := w.repo.Usage(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range buckets {
			if !b.EndTime.Equal(b.StartTime.Add(f.BucketWidth)) {
				t.Fatalf("bucket %v–%v is not %v wide", b.StartTime, b.EndTime, f.BucketWidth)
			}
			for _, r := range b.Results {
				k := fmt.Sprintf("%s|%s|%s|%s|%s", b.StartTime.Format(time.RFC3339), str(r.ProjectID), str(r.KeyID), str(r.ServiceID), str(r.Operation))
				if _, dup := out[k]; dup {
					t.Fatalf("group %s twice", k)
				}
				out[k] = sums{r.Requests, r.Errors, r.ChargedMicro}
			}
		}
		if next == "" {
			return out
		}
		f.Cursor = next
	}
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// expected sums events the way usage must.
func expected(events []audit.Event, width time.Duration, groupBy []string) map[string]sums {
	has := func(g string) bool { return strings.Contains(strings.Join(groupBy, ","), g) }
	dim := func(g string, v *string) string {
		if !has(g) || v == nil || *v == "" {
			return "null"
		}
		return *v
	}
	out := map[string]sums{}
	for _, e := range events {
		svc, op, key := e.ServiceID, e.Operation, e.KeyID
		k := fmt.Sprintf("%s|%s|%s|%s|%s", e.OccurredAt.Truncate(width).Format(time.RFC3339),
			dim(audit.GroupProject, e.ProjectID), dim(audit.GroupKey, &key), dim(audit.GroupService, &svc), dim(audit.GroupOperation, &op))
		s := out[k]
		s.requests++
		if e.Status >= 400 {
			s.errors++
		}
		s.micro += e.ChargedMicro
		out[k] = s
	}
	return out
}

func TestARedeliveredEventIsCountedOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		ctx := context.Background()
		recordConcurrently(t, audit.NewRecorder(w.st, w.clock.Now), w.traffic(10))
		evs := w.all(t, w.window(w.viewer(w.root, "")))
		r := audit.NewRollup(w.st)
		batches := [][]audit.Event{
			evs[:4],
			evs[:4],                  // the same batch again
			{evs[4], evs[4], evs[5]}, // one event twice in a batch
			append(append([]audit.Event{}, evs[3:]...), evs[0]), // a batch overlapping both
		}
		for _, b := range batches {
			if n, err := r.Apply(ctx, b); err != nil || n != len(b) {
				t.Fatalf("Apply = %d, %v", n, err)
			}
		}
		got := w.usage(t, audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0.Add(-time.Hour), End: t0.Add(31 * time.Hour), BucketWidth: 24 * time.Hour})
		var requests int64
		for _, s := range got {
			requests += s.requests
		}
		if requests != 10 {
			t.Fatalf("usage counts %d requests, want 10", requests)
		}
	})
}

func TestTheEmbeddedRecorderCountsSettlementsLeftPending(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	ctx := context.Background()
	// Settlements commit inside other transactions, with no recorder.
	for _, e := range w.traffic(40) {
		if err := w.st.Transact(ctx, audit.SettlementOps(&e)); err != nil {
			t.Fatal(err)
		}
	}
	f := audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0.Add(-time.Hour), End: t0.Add(31 * time.Hour), BucketWidth: 24 * time.Hour}
	count := func() (n int64) {
		for _, s := range w.usage(t, f) {
			n += s.requests
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("counted %d before the recorder started", n)
	}
	rec := embedded(t, w, t.TempDir()) // catches up in its goroutine ...
	var wg sync.WaitGroup
	for range 2 { // ... while two more catch-ups race it
		wg.Go(func() {
			if err := rec.Catchup(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	rec.Close()
	if n := count(); n != 40 {
		t.Fatalf("counted %d after the catch-up, want 40", n)
	}
}

func TestUsagePagesHoldAtMost168HourlyOr31DailyBuckets(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	rec := embedded(t, w, t.TempDir())
	ctx := context.Background()
	start := t0.Add(-20 * time.Hour).Truncate(24 * time.Hour)
	var evs []audit.Event
	for d := range 40 {
		evs = append(evs, w.event(w.a, "", "", "projects.list", 200, 0, start.Add(time.Duration(d)*24*time.Hour+90*time.Minute)))
	}
	w.clock.Set(start.Add(45 * 24 * time.Hour))
	recordConcurrently(t, rec, evs)
	rec.Close()
	for _, c := range []struct {
		width time.Duration
		days  int
		pages []int
	}{{time.Hour, 10, []int{168, 72}}, {24 * time.Hour, 40, []int{31, 9}}} {
		f := audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: start, End: start.Add(time.Duration(c.days) * 24 * time.Hour), BucketWidth: c.width}
		var sizes []int
		var requests int64
		for {
			buckets, next, err := w.repo.Usage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(buckets))
			for _, b := range buckets {
				for _, r := range b.Results {
					requests += r.Requests
				}
			}
			if next == "" {
				break
			}
			f.Cursor = next
		}
		if fmt.Sprint(sizes) != fmt.Sprint(c.pages) || requests != int64(c.days) {
			t.Errorf("%v: pages %v with %d requests, want %v with %d", c.width, sizes, requests, c.pages, c.days)
		}
	}
}

func TestEventsAndUsageExpireAfterNinetyDays(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		ctx := context.Background()
		rec := audit.NewRecorder(w.st, w.clock.Now)
		if err := rec.Record(ctx, w.event(w.a, "", "", "projects.list", 200, 0, t0)); err != nil {
			t.Fatal(err)
		}
		deliver(t, audit.NewRollup(w.st), w.all(t, w.window(w.viewer(w.root, ""))))
		visible := func() (events int, requests int64) {
			events = len(w.all(t, audit.Filter{Viewer: w.viewer(w.root, ""), Since: t0.Add(-time.Hour), Until: t0.Add(time.Hour)}))
			for _, s := range w.usage(t, audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0, End: t0.Add(time.Hour), BucketWidth: time.Hour}) {
				requests += s.requests
			}
			return events, requests
		}
		w.clock.Set(t0.Add(audit.Retention - time.Second))
		if e, r := visible(); e != 1 || r != 1 {
			t.Fatalf("just before 90 days: %d events, %d requests; want 1, 1", e, r)
		}
		w.clock.Set(t0.Add(audit.Retention))
		if e, _ := visible(); e != 0 {
			t.Fatalf("at 90 days: %d events, want none", e)
		}
		w.clock.Set(t0.Add(audit.Retention + time.Hour))
		if e, r := visible(); e != 0 || r != 0 {
			t.Fatalf("after 90 days: %d events, %d requests; want none", e, r)
		}
	})
}

// An event named by its request and time (a charged call's, which a replay
// of its stored answer writes again in case its process died before
// writing it) is one item however often it is recorded, through either
// recorder, and the embedded one counts it once.
func TestANamedEventRecordedTwiceIsStoredAndCountedOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		for _, tc := range []struct {
			name     string
			recorder func(w *world) *audit.Recorder
		}{
			{"put", func(w *world) *audit.Recorder { return audit.NewRecorder(w.st, w.clock.Now) }},
			{"embedded", func(w *world) *audit.Recorder { return embedded(t, w, t.TempDir()) }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := newWorld(t, be)
				rec := tc.recorder(w)
				ctx := context.Background()
				e := w.event(w.a, "", "cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", 200, 10_000, t0)
				e.Name(e.RequestID, t0.Add(time.Second))
				for range 3 {
					again := e
					if err := rec.Record(ctx, again); err != nil {
						t.Fatal(err)
					}
					if err := rec.Settle(ctx); err != nil {
						t.Fatal(err)
					}
				}
				evs := w.all(t, w.window(w.viewer(w.root, "")))
				if len(evs) != 1 || evs[0].ID != e.ID || evs[0].ChargedMicro != 10_000 {
					t.Fatalf("stored %d events (%v), want the one named %s", len(evs), requestIDs(evs), e.ID)
				}
				if tc.name != "embedded" {
					return // the table's stream counts what the put path stores
				}
				got := w.usage(t, audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0.Add(-time.Hour), End: t0.Add(23 * time.Hour), BucketWidth: 24 * time.Hour})
				var requests, micro int64
				for _, s := range got {
					requests, micro = requests+s.requests, micro+s.micro
				}
				if requests != 1 || micro != 10_000 {
					t.Fatalf("usage counts %d requests, %d micro-credits; want 1 and 10000", requests, micro)
				}
			})
		}
	})
}
