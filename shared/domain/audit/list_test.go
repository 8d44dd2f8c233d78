package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/audit"
)

func TestAKeySeesItselfAndItsDescendantsOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		rec := audit.NewRecorder(w.st, w.clock.Now)
		ctx := context.Background()
		byKey := map[string][]audit.Event{}
		for i, path := range [][]string{w.root, w.a, w.a1, w.b} {
			for j, project := range []string{"", "prj_one", "prj_two"} {
				e := w.event(path, project, "", "projects.list", 200, 0, t0.Add(time.Duration(i*3+j)*time.Minute))
				if err := rec.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
				byKey[path[len(path)-1]] = append(byKey[path[len(path)-1]], e)
			}
		}
		want := func(paths ...[]string) map[string]bool {
			var evs []audit.Event
			for _, p := range paths {
				evs = append(evs, byKey[p[len(p)-1]]...)
			}
			return requestIDs(evs)
		}
		onlyProject := func(m map[string]bool, project string) map[string]bool {
			for _, evs := range byKey {
				for _, e := range evs {
					if e.ProjectID == nil || *e.ProjectID != project {
						delete(m, e.RequestID)
					}
				}
			}
			return m
		}
		cases := []struct {
			name   string
			viewer audit.Viewer
			want   map[string]bool
		}{
			{"the root sees the whole tree", w.viewer(w.root, ""), want(w.root, w.a, w.a1, w.b)},
			{"a key sees its descendants, not its sibling", w.viewer(w.a, ""), want(w.a, w.a1)},
			{"a leaf sees itself, not its ancestors", w.viewer(w.a1, ""), want(w.a1)},
			{"a sibling branch is invisible", w.viewer(w.b, ""), want(w.b)},
			{"a project-bound key sees only its project", w.viewer(w.a, "prj_one"), onlyProject(want(w.a, w.a1), "prj_one")},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := requestIDs(w.all(t, w.window(c.viewer)))
				if !maps.Equal(got, c.want) {
					t.Fatalf("saw %d events, want %d", len(got), len(c.want))
				}
			})
		}
	})
}

func TestTheEventListIsNewestFirstAcrossShardsAndDays(t *testing.T) {
	eachBackend(t, func(t *testing.T, be teststores.Backend) {
		w := newWorld(t, be)
		rec := audit.NewRecorder(w.st, w.clock.Now)
		ctx := context.Background()
		var recorded []audit.Event
		for i := range 41 {
			// 41 events over 50 hours: three UTC days, every shard.
			e := w.event(w.a, "", "", "projects.list", 200+i%2*204, 0, t0.Add(time.Duration(i)*75*time.Minute))
			if err := rec.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
			recorded = append(recorded, e)
		}
		f := w.window(w.viewer(w.root, ""))
		f.Limit = 4
		var got []audit.Event
		pages := 0
		for {
			page, next, err := w.repo.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page) > f.Limit || next != "" && len(page) != f.Limit {
				t.Fatalf("page %d has %d events (next %q)", pages, len(page), next)
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			f.Cursor = next
		}
		if len(got) != len(recorded) || pages != 11 {
			t.Fatalf("%d events in %d pages, want %d in 11", len(got), pages, len(recorded))
		}
		if !maps.Equal(requestIDs(got), requestIDs(recorded)) {
			t.Fatal("paging lost or repeated events")
		}
		if !slices.IsSortedFunc(got, func(x, y audit.Event) int { return -x.OccurredAt.Compare(y.OccurredAt) }) {
			t.Fatal("events are not newest first")
		}

		// The range is inclusive at since and exclusive at until, to the millisecond.
		f = w.window(w.viewer(w.root, ""))
		f.Since, f.Until = recorded[3].OccurredAt, recorded[9].OccurredAt
		if between := w.all(t, f); !maps.Equal(requestIDs(between), requestIDs(recorded[3:9])) {
			t.Fatalf("since/until selected %d events, want 6", len(between))
		}

		// Filters hold across pages.
		f = w.window(w.viewer(w.root, ""))
		f.Limit, f.Status = 3, 404
		var notFound []audit.Event
		for _, e := range recorded {
			if e.Status == 404 {
				notFound = append(notFound, e)
			}
		}
		if got := w.all(t, f); !maps.Equal(requestIDs(got), requestIDs(notFound)) {
			t.Fatalf("status filter gave %d events, want %d", len(got), len(notFound))
		}
	})
}

func TestFiltersSelectByKeyOperationAndStatus(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	rec := audit.NewRecorder(w.st, w.clock.Now)
	ctx := context.Background()
	evs := []audit.Event{
		w.event(w.a, "", "cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", 200, 10_000, t0),
		w.event(w.a1, "", "cloud-superbrain", "services.invoke.cloud-superbrain.memory.search", 402, 0, t0.Add(time.Minute)),
		w.event(w.a1, "", "", "projects.list", 200, 0, t0.Add(2*time.Minute)),
	}
	for _, e := range evs {
		if err := rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		set  func(*audit.Filter)
		want []audit.Event
	}{
		{"keyId selects the key's own events", func(f *audit.Filter) { f.KeyID = w.a1[2] }, evs[1:]},
		{"an exact operation", func(f *audit.Filter) { f.Operation = "projects.list" }, evs[2:]},
		{"an aggregate covers its refinements", func(f *audit.Filter) { f.Operation = "services.invoke" }, evs[:2]},
		{"a service refinement", func(f *audit.Filter) { f.Operation = "services.invoke.cloud-superbrain" }, evs[:2]},
		{"status", func(f *audit.Filter) { f.Status = 402 }, evs[1:2]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := w.window(w.viewer(w.root, ""))
			c.set(&f)
			if got := w.all(t, f); !maps.Equal(requestIDs(got), requestIDs(c.want)) {
				t.Fatalf("got %d events, want %d", len(got), len(c.want))
			}
		})
	}
}

func TestBadFiltersAreValidationErrorsNamingTheParameter(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	v := w.viewer(w.root, "")
	now := t0
	list := []struct {
		name     string
		q        audit.ListQuery
		location string
	}{
		{"since is not a time", audit.ListQuery{Since: "yesterday"}, "query.since"},
		{"until is not a time", audit.ListQuery{Until: "1700000000"}, "query.until"},
		{"since after until", audit.ListQuery{Since: "2026-03-02T00:00:00Z", Until: "2026-03-01T00:00:00Z"}, "query.since"},
		{"since equal to until", audit.ListQuery{Since: "2026-03-01T00:00:00Z", Until: "2026-03-01T00:00:00Z"}, "query.since"},
		{"a range over 90 days", audit.ListQuery{Since: "2025-11-30T23:59:59Z", Until: "2026-03-01T00:00:00Z"}, "query.since"},
		{"status below 100", audit.ListQuery{Status: "99"}, "query.status"},
		{"status above 599", audit.ListQuery{Status: "600"}, "query.status"},
		{"status not a number", audit.ListQuery{Status: "4xx"}, "query.status"},
		{"an unknown operation", audit.ListQuery{Operation: "projects.explode"}, "query.operation"},
		{"an unknown service refinement", audit.ListQuery{Operation: "services.invoke.no-such-service"}, "query.operation"},
		{"an unknown operation refinement", audit.ListQuery{Operation: "services.invoke.cloud-superbrain.memory.explode"}, "query.operation"},
		{"a keyId that is not a key id", audit.ListQuery{KeyID: "key_short"}, "query.keyId"},
		{"limit above 100", audit.ListQuery{Limit: 101}, "query.limit"},
		{"limit below 1", audit.ListQuery{Limit: -1}, "query.limit"},
		{"a cursor that is not ours", audit.ListQuery{Cursor: "bm90IGEgY3Vyc29y"}, "query.cursor"},
	}
	for _, c := range list {
		t.Run("list/"+c.name, func(t *testing.T) {
			f, err := audit.ParseListQuery(v, c.q, now)
			if err == nil {
				_, _, err = w.repo.List(context.Background(), f)
			}
			assertInvalid(t, err, c.location)
		})
	}
	usage := []struct {
		name     string
		q        audit.UsageQuery
		location string
	}{
		{"start is not a time", audit.UsageQuery{Start: "monday"}, "query.start"},
		{"start after end", audit.UsageQuery{Start: "2026-03-02T00:00:00Z", End: "2026-03-01T00:00:00Z"}, "query.start"},
		{"a range over 90 days", audit.UsageQuery{Start: "2025-11-01T00:00:00Z", End: "2026-03-01T00:00:00Z"}, "query.start"},
		{"an unknown bucket width", audit.UsageQuery{BucketWidth: "1w"}, "query.bucketWidth"},
		{"an unknown group", audit.UsageQuery{GroupBy: "project,colour"}, "query.groupBy"},
		{"a cursor outside the range", audit.UsageQuery{Start: "2026-03-01T00:00:00Z", End: "2026-03-02T00:00:00Z", Cursor: "MTAwMA"}, "query.cursor"},
	}
	for _, c := range usage {
		t.Run("usage/"+c.name, func(t *testing.T) {
			f, err := audit.ParseUsageQuery(v, c.q, now)
			if err == nil {
				_, _, err = w.repo.Usage(context.Background(), f)
			}
			assertInvalid(t, err, c.location)
		})
	}
	t.Run("valid queries pass", func(t *testing.T) {
		for _, q := range []audit.ListQuery{{}, {Operation: "services.invoke.cloud-superbrain.memory.write", Status: "429", KeyID: w.a[1], Limit: 100}, {Operation: "runs.create"}} {
			f, err := audit.ParseListQuery(v, q, now)
			if err == nil {
				_, _, err = w.repo.List(context.Background(), f)
			}
			if err != nil {
				t.Errorf("%+v: %v", q, err)
			}
		}
	})
}

func assertInvalid(t *testing.T, err error, location string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed {
		t.Fatalf("err = %v, want validation_failed", err)
	}
	for _, fe := range ae.Errors {
		if fe.Location == location {
			return
		}
	}
	t.Fatalf("errors %+v do not name %s", ae.Errors, location)
}

func TestAnEventRendersTheContractFieldsAndNothingElse(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	rec := audit.NewRecorder(w.st, w.clock.Now)
	e := w.event(w.a1, "prj_one", "cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", 200, 1_500, t0)
	if err := rec.Record(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	got := w.all(t, w.window(w.viewer(w.root, "")))
	if len(got) != 1 {
		t.Fatalf("%d events", len(got))
	}
	b, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"chargedCredits", "code", "endUser", "id", "idempotentReplayed", "keyId", "method", "occurredAt",
		"operation", "path", "projectId", "requestId", "status"}
	if keys := slices.Sorted(maps.Keys(m)); !slices.Equal(keys, want) {
		t.Fatalf("fields %v, want %v", keys, want)
	}
	if m["chargedCredits"] != 0.0015 || m["keyId"] != w.a1[2] || m["code"] != nil || m["endUser"] != nil {
		t.Fatalf("rendered %s", b)
	}
}

func TestANarrowFilterEndsAPageAtTheScanBudgetAndGoesOn(t *testing.T) {
	w := newWorld(t, teststores.Embedded)
	rec := audit.NewRecorder(w.st, w.clock.Now)
	ctx := context.Background()
	var wanted []audit.Event
	for i := range 12 {
		status := 200
		if i < 2 { // the two oldest are the only matches
			status = 404
		}
		e := w.event(w.a, "", "", "projects.list", status, 0, t0.Add(time.Duration(i)*time.Minute))
		if err := rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		if status == 404 {
			wanted = append(wanted, e)
		}
	}
	defer audit.SetMaxScan(5)()
	f := w.window(w.viewer(w.root, ""))
	f.Status = 404
	page, next, err := w.repo.List(ctx, f)
	if err != nil || len(page) != 0 || next == "" {
		t.Fatalf("first page: %d events, next %q, err %v; want an empty page with a cursor", len(page), next, err)
	}
	if got := w.all(t, f); !maps.Equal(requestIDs(got), requestIDs(wanted)) {
		t.Fatalf("found %d events, want 2", len(got))
	}
}
