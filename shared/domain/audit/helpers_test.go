package audit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/audit"
)

// t0 is late in a UTC day, so that a few hours of traffic cross midnight.
var t0 = time.Date(2026, 3, 10, 20, 0, 0, 0, time.UTC)

// world is one account with a key tree on one store:
//
//	root ─┬─ a ── a1
//	      └─ b
type world struct {
	st             store.Store
	repo           *audit.Repo
	acct           string
	root, a, a1, b []string // key paths
	clock          *testclock.Clock
}

func newWorld(t *testing.T, be teststores.Backend) *world {
	w := keyTree()
	w.st = be.Open(t, w.clock.Now)
	w.repo = audit.NewRepo(w.st, w.clock.Now)
	return w
}

// keyTree is a world without its store.
func keyTree() *world {
	w := &world{acct: ids.New("acct", t0), clock: testclock.New(t0.Add(72 * time.Hour))}
	root := ids.New("key", t0)
	w.root = []string{root}
	w.a = []string{root, ids.New("key", t0)}
	w.a1 = append(append([]string{}, w.a...), ids.New("key", t0))
	w.b = []string{root, ids.New("key", t0)}
	return w
}

func (w *world) viewer(path []string, project string) audit.Viewer {
	return audit.Viewer{AccountID: w.acct, KeyPath: path, ProjectID: project}
}

// event is a request of the key at path, in project ("" for none).
func (w *world) event(path []string, project, service, op string, status int, micro int64, at time.Time) audit.Event {
	e := audit.Event{
		OccurredAt: at, RequestID: ids.New("req", at), AccountID: w.acct, KeyPath: path,
		Operation: op, Method: "POST", Path: "/v1/x", Status: status, ServiceID: service, ChargedMicro: micro,
	}
	if project != "" {
		e.ProjectID = &project
	}
	if status >= 400 {
		code := "limit_exceeded"
		e.Code = &code
	}
	return e
}

// all reads every event f selects, page by page.
func (w *world) all(t *testing.T, f audit.Filter) []audit.Event {
	t.Helper()
	var out []audit.Event
	for range 1000 {
		page, next, err := w.repo.List(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		f.Cursor = next
	}
	t.Fatal("list never ended")
	return nil
}

func (w *world) window(v audit.Viewer) audit.Filter {
	return audit.Filter{Viewer: v, Since: t0.Add(-24 * time.Hour), Until: t0.Add(72 * time.Hour), Limit: 100}
}

func eachBackend(t *testing.T, f func(t *testing.T, be teststores.Backend)) {
	for _, be := range teststores.All() {
		t.Run(be.Name, func(t *testing.T) { f(t, be) })
	}
}

func requestIDs(evs []audit.Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range evs {
		out[e.RequestID] = true
	}
	return out
}

// embedded is an embedded recorder with its journal in dir, closed at the
// end of the test.
func embedded(t testing.TB, w *world, dir string) *audit.Recorder {
	t.Helper()
	rec, err := audit.NewEmbeddedRecorder(w.st, w.clock.Now, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	return rec
}

// copyDir copies the files of dir into a new directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
