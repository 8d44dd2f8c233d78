package audit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
)

// queryCounter counts the queries a list asks of its store.
type queryCounter struct {
	store.Store
	queries atomic.Int64
}

func (q *queryCounter) Query(ctx context.Context, qu store.Query) (store.Page, error) {
	q.queries.Add(1)
	return q.Store.Query(ctx, qu)
}

// No event is older than its account: a list over the whole retention
// whose page never fills reads back to the day before the account was
// made, not 90 days of every shard (1,440 queries on DynamoDB).
func TestAListReadsNoDayBeforeItsAccountWasMade(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		ctx := context.Background()
		if err := audit.NewRecorder(w.st, w.clock.Now).Record(ctx, w.event(w.root, "", "", "projects.list", 200, 0, t0.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
		counted := &queryCounter{Store: w.st}
		f, err := audit.ParseListQuery(w.viewer(w.root, ""), audit.ListQuery{}, w.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		page, next, err := audit.NewRepo(counted, w.clock.Now).List(ctx, f)
		if err != nil || len(page) != 1 || next != "" {
			t.Fatalf("%d events, next %q (%v)", len(page), next, err)
		}
		// The account is three days old: the days from the one before it
		// was made to today are five, of 16 shards each.
		if n := counted.queries.Load(); n > 5*audit.Shards {
			t.Fatalf("%d queries for a list of five days", n)
		}
	})
}
