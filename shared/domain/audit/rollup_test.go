package audit_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/throttlestore"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
)

// interleaved records 33 events of each of three operations of one key and
// returns them read back, one of each operation in turn.
func interleaved(t *testing.T, w *world) []audit.Event {
	t.Helper()
	ops := []string{"files.list", "projects.list", "projects.read"} // in the counters' order
	var evs []audit.Event
	for i := range 99 {
		evs = append(evs, w.event(w.a, "", "", ops[i%3], 200, 0, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	recordConcurrently(t, audit.NewRecorder(w.st, w.clock.Now), evs)
	byOp := map[string][]audit.Event{}
	for _, e := range w.all(t, w.window(w.viewer(w.root, ""))) {
		byOp[e.Operation] = append(byOp[e.Operation], e)
	}
	out := make([]audit.Event, 0, 99)
	for i := range 33 {
		for _, op := range ops {
			out = append(out, byOp[op][i])
		}
	}
	return out
}

// A batch is cut into transactions by counter, not by arrival: 99 events
// of three operations arriving in turn are three transactions of one
// counter each (2 write units apiece on the account-day's partition), not
// three transactions that each write all three counters.
func TestARollupWritesEachCounterOncePerTransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		evs := interleaved(t, w)
		st := throttlestore.New(w.st, throttlestore.WithUnits(1e12, 1e12))
		if n, err := audit.NewRollup(st).Apply(context.Background(), evs); err != nil || n != len(evs) {
			t.Fatalf("Apply = %d, %v", n, err)
		}
		var counterWrites float64
		for pk, p := range st.Partitions() {
			if strings.HasPrefix(pk, "use#") {
				counterWrites += p.WriteUnits
			}
		}
		if counterWrites != 3*2 {
			t.Fatalf("the counters' partition took %v write units; want 6 (three transactions of one counter)", counterWrites)
		}
	})
}

// failingSecond fails the second transaction it is given, as a throttled
// or lost write would.
type failingSecond struct {
	store.Store
	calls atomic.Int32
}

func (f *failingSecond) Transact(ctx context.Context, ops []store.Op) error {
	if f.calls.Add(1) == 2 {
		return store.ErrUnavailable
	}
	return f.Store.Transact(ctx, ops)
}

// When a later transaction of a batch fails, Apply reports only the events
// counted from the first one on, so the stream delivers the rest again:
// the events counted out of order are skipped then, and every event is
// counted exactly once.
func TestARollupThatFailsMidBatchCountsEveryEventOnceWhenRedelivered(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		evs := interleaved(t, w)
		r := audit.NewRollup(&failingSecond{Store: w.st})
		n, err := r.Apply(context.Background(), evs)
		if err == nil || n != 1 {
			t.Fatalf("Apply = %d, %v; want the first event counted (its operation's transaction went first) and an error", n, err)
		}
		if n, err := r.Apply(context.Background(), evs[n:]); err != nil || n != len(evs)-1 {
			t.Fatalf("redelivery: Apply = %d, %v", n, err)
		}
		got := w.usage(t, audit.UsageFilter{Viewer: w.viewer(w.root, ""), Start: t0.Add(-time.Hour), End: t0.Add(time.Hour),
			BucketWidth: time.Hour, GroupBy: []string{audit.GroupOperation}})
		if len(got) != 3 {
			t.Fatalf("usage = %v; want three operations", got)
		}
		for k, s := range got {
			if s.requests != 33 {
				t.Fatalf("%s counts %d requests; want 33", k, s.requests)
			}
		}
	})
}
