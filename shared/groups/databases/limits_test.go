package databases_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/dbstore"
	"platformapi/shared/groups/databases/engine"
)

// slowFiles is file storage slow to reach, as a cold function's first read
// of a large database from its bucket is, or a busy store: every read and
// write first waits, and a write waits again once its changes are made,
// before it publishes them.
type slowFiles struct {
	dbstore.Storage
	wait time.Duration
}

func (s slowFiles) Read(ctx context.Context, dbID string, fn dbstore.ReadFunc) error {
	time.Sleep(s.wait)
	return s.Storage.Read(ctx, dbID, fn)
}

func (s slowFiles) Write(ctx context.Context, dbID string, fn dbstore.WriteFunc) (int64, error) {
	time.Sleep(s.wait)
	return s.Storage.Write(ctx, dbID, func(c *engine.Conn, version int64) error {
		err := fn(c, version)
		time.Sleep(s.wait)
		return err
	})
}

// A query's or a batch's deadline bounds its statements, not the fetch of
// the database they run on nor the publication of what they wrote: storage
// slow to reach does not turn quick statements into a query_timeout.
func TestADeadlineStartsWithTheStatementsItBounds(t *testing.T) {
	limits := databases.DefaultLimits
	limits.QueryTimeout = 300 * time.Millisecond
	s, _ := serviceWrapping(t, limits, func(st dbstore.Storage) dbstore.Storage { return slowFiles{st, 2 * limits.QueryTimeout} })
	if _, err := s.Provision(ctx(), scope); err != nil {
		t.Fatal(err)
	}
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "CREATE TABLE t(id INTEGER PRIMARY KEY)"})
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "INSERT INTO t(id) VALUES (1)"})
	res, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT count(*) AS n FROM t"})
	if err != nil || res.Rows[0].(map[string]any)["n"] != int64(1) {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestAStatementStoppedByItsRequestIs408NeverA500(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	gone, cancel := context.WithCancel(ctx())
	cancel() // the client went away before (or while) the statement ran
	if _, err := s.Query(gone, scope, databases.QueryRequest{SQL: "SELECT count(*) FROM t"}); code(err) != apierr.QueryTimeout {
		t.Fatalf("query: %v", err)
	}
	if _, err := s.Actions(gone, scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{{Type: "execute", SQL: "INSERT INTO t(name) VALUES('x')"}}}); code(err) != apierr.QueryTimeout {
		t.Fatalf("actions: %v", err)
	}
	res, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT count(*) AS n FROM t"})
	if err != nil || res.Rows[0].(map[string]any)["n"] != int64(0) {
		t.Fatalf("the stopped batch wrote: %+v %v", res, err)
	}
}

func TestTheServersFilePathAndThePlatformsTablesAreOutOfReach(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	if _, err := s.Actions(ctx(), scope, databases.ActionsRequest{CallID: "call-1", Actions: []databases.DatabaseAction{{Type: "execute", SQL: "INSERT INTO t(name) VALUES('a')"}}}); err != nil {
		t.Fatal(err) // the calls table now exists
	}
	for _, sql := range []string{
		"SELECT * FROM pragma_database_list",
		"SELECT file FROM pragma_database_list()",
		"SELECT * FROM _platform_calls",
	} {
		_, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: sql})
		if code(err) != apierr.QueryNotReadonly || strings.Contains(err.Error(), "/") {
			t.Errorf("query %s: %v", sql, err)
		}
	}
	for _, sql := range []string{
		"SELECT file FROM pragma_database_list",
		"ALTER TABLE _migrations RENAME TO m",
		"ALTER TABLE _migrations ADD COLUMN x",
		"CREATE TRIGGER tr BEFORE INSERT ON _migrations BEGIN SELECT RAISE(IGNORE); END",
		"CREATE INDEX i ON _migrations(appliedAt)",
		"SELECT * FROM _platform_calls",
		"DELETE FROM _platform_calls",
		"DROP TABLE _platform_calls",
		"CREATE TRIGGER tr BEFORE INSERT ON _platform_calls BEGIN SELECT RAISE(IGNORE); END",
	} {
		_, err := s.Actions(ctx(), scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{{Type: "execute", SQL: sql}}})
		if code(err) != apierr.SQLError {
			t.Errorf("action %s: %v", sql, err)
		}
	}
}

// The crash point of an idempotent batch: SQLite committed, the response
// never stored, so the claim expires and the client retries the same call.
func TestARetriedCallIsAnsweredFromTheDatabaseAndWritesOnce(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	req := databases.ActionsRequest{CallID: "call-once", Actions: []databases.DatabaseAction{{Type: "execute", SQL: "INSERT INTO t(name) VALUES('once')"}}}
	first, err := s.Actions(ctx(), scope, req)
	if err != nil {
		t.Fatal(err)
	}
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "INSERT INTO t(name) VALUES('later')"}) // the database moves on
	retry, err := s.Actions(ctx(), scope, req)
	if err != nil {
		t.Fatal(err)
	}
	if retry.DatabaseVersion != first.DatabaseVersion || retry.Results[0] != first.Results[0] || retry.Meta != first.Meta {
		t.Fatalf("retry answered %+v, first %+v", retry, first)
	}
	res, _ := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT count(*) AS n FROM t WHERE name = 'once'"})
	if n := res.Rows[0].(map[string]any)["n"]; n != int64(1) {
		t.Fatalf("%v rows", n)
	}
	other := req
	other.Actions = []databases.DatabaseAction{{Type: "execute", SQL: "INSERT INTO t(name) VALUES('other')"}}
	if _, err := s.Actions(ctx(), scope, other); code(err) != apierr.IdempotencyKeyReused {
		t.Fatalf("same call, another batch: %v", err)
	}
}

func TestABatchThatChangesNothingKeepsTheVersion(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	before, _ := s.Get(ctx(), scope)
	again := mustAct(t, s, databases.DatabaseAction{Type: "migrate", ID: "001", SQL: "CREATE TABLE t(x)"})
	if !again.Results[0].Skipped || again.DatabaseVersion != before.Version {
		t.Fatalf("skipped migration: %+v, version was %d", again, before.Version)
	}
	v := before.Version
	if _, err := s.Actions(ctx(), scope, databases.ActionsRequest{IfVersion: &v, Actions: []databases.DatabaseAction{{Type: "execute", SQL: "DELETE FROM t"}}}); err != nil {
		t.Fatalf("ifVersion writer refused: %v", err)
	}
}
