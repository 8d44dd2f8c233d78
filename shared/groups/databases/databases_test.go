package databases_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/dbstore"
)

var scope = databases.Scope{AccountID: "acc_1", ProjectID: "prj_1"}

func service(t testing.TB, limits databases.Limits) *databases.Service {
	s, _ := serviceIn(t, limits)
	return s
}

// serviceIn builds the service on the embedded adapters and returns the
// directory holding its SQLite files.
func serviceIn(t testing.TB, limits databases.Limits) (*databases.Service, string) {
	t.Helper()
	return serviceWrapping(t, limits, func(s dbstore.Storage) dbstore.Storage { return s })
}

// serviceWrapping is serviceIn with its file storage wrapped by wrap.
func serviceWrapping(t testing.TB, limits databases.Limits, wrap func(dbstore.Storage) dbstore.Storage) (*databases.Service, string) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "platform.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := filepath.Join(t.TempDir(), "databases")
	files, err := dbstore.NewEmbedded(root, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	bucket, err := fsblob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := archive.NewSigner(bytes.Repeat([]byte{7}, 32))
	return databases.New(st, wrap(files), bucket, signer, t.TempDir(), time.Now, limits), root
}

func ctx() context.Context { return context.Background() }

func code(err error) apierr.Code {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

func provisioned(t *testing.T, limits databases.Limits) *databases.Service {
	s := service(t, limits)
	if _, err := s.Provision(ctx(), scope); err != nil {
		t.Fatal(err)
	}
	mustAct(t, s, databases.DatabaseAction{Type: "migrate", ID: "001", SQL: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB); CREATE INDEX t_name ON t(name)"})
	return s
}

func mustAct(t *testing.T, s *databases.Service, actions ...databases.DatabaseAction) *databases.ActionsResult {
	t.Helper()
	res, err := s.Actions(ctx(), scope, databases.ActionsRequest{Actions: actions})
	if err != nil {
		t.Fatalf("actions: %v", err)
	}
	return res
}

func TestProvisionTwiceIsDatabaseExistsAndOtherScopesSeeNothing(t *testing.T) {
	s := service(t, databases.DefaultLimits)
	db, err := s.Provision(ctx(), scope)
	if err != nil || !strings.HasPrefix(db.ID, "db_") || db.Status != "active" || db.Engine != "sqlite" {
		t.Fatalf("%+v %v", db, err)
	}
	if _, err := s.Provision(ctx(), scope); code(err) != apierr.DatabaseExists {
		t.Fatalf("second provision: %v", err)
	}
	for _, other := range []databases.Scope{{AccountID: "acc_1"}, {AccountID: "acc_1", ProjectID: "prj_2"}, {AccountID: "acc_2", ProjectID: "prj_1"}} {
		if _, err := s.Get(ctx(), other); code(err) != apierr.NotFound {
			t.Fatalf("%+v: %v", other, err)
		}
		if _, err := s.Query(ctx(), other, databases.QueryRequest{SQL: "SELECT 1"}); code(err) != apierr.NotFound {
			t.Fatalf("%+v query: %v", other, err)
		}
	}
	if err := s.Deprovision(ctx(), scope); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx(), scope); code(err) != apierr.NotFound {
		t.Fatalf("after deprovision: %v", err)
	}
}

func TestQueriesThatWriteAreRefusedBySQLite(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	for _, sql := range []string{
		"INSERT INTO t(name) VALUES('x')",
		"UPDATE t SET name = 'y'",
		"DELETE FROM t",
		"CREATE TABLE u(x)",
		"DROP TABLE t",
		"ATTACH DATABASE ':memory:' AS other",
		"PRAGMA writable_schema=1",
		"PRAGMA journal_mode=DELETE",
		"PRAGMA query_only=0",
		"SELECT load_extension('/tmp/evil.so')",
		"WITH x AS (SELECT 1) INSERT INTO t(name) SELECT 'z' FROM x",
		"WITH d AS (DELETE FROM t RETURNING id) SELECT * FROM d",
		"BEGIN",
		"CREATE TEMP TABLE scratch(x)",
	} {
		t.Run(sql, func(t *testing.T) {
			_, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: sql})
			if c := code(err); c != apierr.QueryNotReadonly && c != apierr.SQLError {
				t.Fatalf("got %v", err)
			}
		})
	}
	for _, sql := range []string{"INSERT INTO t(name) VALUES('x')", "ATTACH DATABASE ':memory:' AS other", "PRAGMA writable_schema=1", "SELECT load_extension('x')"} {
		if _, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: sql}); code(err) != apierr.QueryNotReadonly {
			t.Errorf("%s: want query_not_readonly, got %v", sql, err)
		}
	}
	res, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT count(*) AS n FROM t"})
	if err != nil || res.Rows[0].(map[string]any)["n"] != int64(0) {
		t.Fatalf("nothing was written: %+v %v", res, err)
	}
	if _, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "PRAGMA table_info(t)"}); err != nil {
		t.Fatalf("a read pragma: %v", err)
	}
}

func TestValuesKeepTheirTypes(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "INSERT INTO t(id, name, score, data) VALUES(?, ?, ?, ?)",
		Params: json.RawMessage(`[9007199254740993, "big", 1.5, {"base64":"AAEC"}]`)})
	res, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT id, name, score, data, NULL AS n FROM t WHERE name = :name",
		Params: json.RawMessage(`{"name":"big"}`), RowMode: "arrays"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Rows)
	if string(got) != `[["9007199254740993","big",1.5,{"base64":"AAEC"},null]]` {
		t.Fatalf("rows %s", got)
	}
	if res.Columns[0].DeclType != "INTEGER" || res.Columns[2].DeclType != "REAL" || res.Meta.DatabaseVersion != 2 || res.Meta.RowsReturned != 1 {
		t.Fatalf("%+v", res)
	}
}

func TestBoundsAreClearClientErrors(t *testing.T) {
	lim := databases.DefaultLimits
	// A second is far past what the setup needs on a busy machine; the
	// runaway statement never ends, so it still meets it.
	lim.MaxSQLBytes, lim.MaxParams, lim.QueryTimeout, lim.MaxResponseBytes = 200, 3, time.Second, 1000
	s := provisioned(t, lim)
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "WITH RECURSIVE g(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM g WHERE value < 300) INSERT INTO t(name) SELECT 'n' || value FROM g"})
	cases := []struct {
		name string
		req  databases.QueryRequest
		want apierr.Code
	}{
		{"sql too long", databases.QueryRequest{SQL: "SELECT 1" + strings.Repeat(" ", 300)}, apierr.ValidationFailed},
		{"too many params", databases.QueryRequest{SQL: "SELECT ?, ?, ?, ?", Params: json.RawMessage(`[1,2,3,4]`)}, apierr.ValidationFailed},
		{"maxRows beyond the cap", databases.QueryRequest{SQL: "SELECT 1", MaxRows: 10_001}, apierr.ValidationFailed},
		{"two statements", databases.QueryRequest{SQL: "SELECT 1; SELECT 2"}, apierr.ValidationFailed},
		{"runaway statement", databases.QueryRequest{SQL: "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r) SELECT count(*) FROM r"}, apierr.QueryTimeout},
		{"syntax", databases.QueryRequest{SQL: "SELEC 1"}, apierr.SQLError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.Query(ctx(), scope, c.req); code(err) != c.want {
				t.Fatalf("want %s, got %v", c.want, err)
			}
		})
	}
	res, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT name FROM t", MaxRows: 10})
	if err != nil || !res.Truncated || len(res.Rows) != 10 {
		t.Fatalf("row cap: %v %v", res, err)
	}
	res, err = s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT name FROM t"})
	if err != nil || !res.Truncated || len(res.Rows) == 0 || len(res.Rows) >= 300 {
		t.Fatalf("response cap: %d rows %v", len(res.Rows), err)
	}
}

func TestABatchIsAllOrNothing(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	_, err := s.Actions(ctx(), scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{
		{Type: "execute", SQL: "INSERT INTO t(name) VALUES('a')"},
		{Type: "execute", SQL: "INSERT INTO nowhere VALUES(1)"},
	}})
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.SQLError || len(ae.Errors) == 0 || ae.Errors[0].Location != "body.actions[1]" {
		t.Fatalf("%#v", err)
	}
	db, _ := s.Get(ctx(), scope)
	res, _ := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT count(*) AS n FROM t"})
	if res.Rows[0].(map[string]any)["n"] != int64(0) || db.Version != 1 {
		t.Fatalf("batch leaked: %+v version %d", res.Rows, db.Version)
	}
}

func TestTransactionControlIsRefusedInActions(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	for _, sql := range []string{"BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT a", "RELEASE a", "ATTACH ':memory:' AS m", "DETACH m", "/* x */ VACUUM", "PRAGMA user_version=99", "INSERT INTO _migrations VALUES('x','y')", "CREATE TEMP TABLE x(a)", "INSERT INTO t(name) VALUES('a'); DELETE FROM t"} {
		_, err := s.Actions(ctx(), scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{{Type: "execute", SQL: sql}}})
		if c := code(err); c != apierr.SQLError && c != apierr.ValidationFailed {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

func TestAMigrationRunsOncePerDatabase(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	m := databases.DatabaseAction{Type: "migrate", ID: "002", SQL: "INSERT INTO t(name) VALUES('seed')"}
	first := mustAct(t, s, m)
	second := mustAct(t, s, m, databases.DatabaseAction{Type: "execute", SQL: "INSERT INTO t(name) VALUES(?)", Params: json.RawMessage(`["x"]`)})
	if first.Results[0].Skipped || first.Results[0].Changes != 1 || !second.Results[0].Skipped || second.Results[1].Changes != 1 || second.Meta.RowsWritten != 1 {
		t.Fatalf("%+v %+v", first, second)
	}
	if second.DatabaseVersion != first.DatabaseVersion+1 {
		t.Fatalf("versions %d %d", first.DatabaseVersion, second.DatabaseVersion)
	}
}

func TestIfVersionGuardsABatch(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	stale := int64(0)
	_, err := s.Actions(ctx(), scope, databases.ActionsRequest{IfVersion: &stale, Actions: []databases.DatabaseAction{{Type: "execute", SQL: "DELETE FROM t"}}})
	if code(err) != apierr.DatabaseVersionMismatch {
		t.Fatalf("%v", err)
	}
	cur := int64(1)
	res, err := s.Actions(ctx(), scope, databases.ActionsRequest{IfVersion: &cur, Actions: []databases.DatabaseAction{{Type: "execute", SQL: "DELETE FROM t"}}})
	if err != nil || res.DatabaseVersion != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestAFullDatabaseRefusesTheWrite(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits) // storage capped at 1 MiB
	_, err := s.Actions(ctx(), scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{{Type: "execute", SQL: "WITH RECURSIVE g(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM g WHERE value < 200) INSERT INTO t(data) SELECT randomblob(10000) FROM g"}}})
	if code(err) != apierr.DatabaseFull {
		t.Fatalf("%v", err)
	}
}

func exportArchive(t *testing.T, s *databases.Service) ([]byte, *databases.ArchiveInfo, string) {
	t.Helper()
	tr, err := s.CreateTransfer(ctx(), scope, databases.CreateTransferRequest{Direction: "export"})
	if err != nil || tr.Status != databases.TransferPreparing {
		t.Fatalf("%+v %v", tr, err)
	}
	if err := s.RunExport(ctx(), scope.AccountID, tr.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RunExport(ctx(), scope.AccountID, tr.ID); err != nil {
		t.Fatalf("retry: %v", err)
	}
	rc, info, err := s.Archive(ctx(), scope, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b, info, tr.ID
}

func importArchive(t *testing.T, s *databases.Service, zipBytes []byte, parts int) *databases.Transfer {
	t.Helper()
	sum := sha256.Sum256(zipBytes)
	tr, err := s.CreateTransfer(ctx(), scope, databases.CreateTransferRequest{Direction: "import", PartCount: parts, SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	size := (len(zipBytes) + parts - 1) / parts
	for n := 1; n <= parts; n++ {
		lo, hi := (n-1)*size, min(n*size, len(zipBytes))
		if lo >= hi {
			break
		}
		for range 2 { // the same part twice is fine
			if err := s.PutPart(ctx(), scope, tr.ID, n, zipBytes[lo:hi]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.CompleteImport(ctx(), scope, tr.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RunImport(ctx(), scope.AccountID, tr.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTransfer(ctx(), scope, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestAnExportedArchiveImportedAgainYieldsTheSameData(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "WITH RECURSIVE g(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM g WHERE value < 500) INSERT INTO t(name, score) SELECT 'n' || value, value / 3.0 FROM g"})
	zipBytes, info, id := exportArchive(t, s)
	sum := sha256.Sum256(zipBytes)
	if info.SHA256 != hex.EncodeToString(sum[:]) || info.SizeBytes != int64(len(zipBytes)) ||
		!archive.Verify(info.PublicKey, info.Signature, id, scope.AccountID, info.SHA256, info.SizeBytes) {
		t.Fatalf("archive info %+v", info)
	}
	before, _ := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT * FROM t ORDER BY id", MaxRows: 1000})
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "DELETE FROM t"})
	tr := importArchive(t, s, zipBytes, 3)
	if tr.Status != databases.TransferCompleted {
		t.Fatalf("%+v", tr)
	}
	after, _ := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT * FROM t ORDER BY id", MaxRows: 1000})
	b1, _ := json.Marshal(before.Rows)
	b2, _ := json.Marshal(after.Rows)
	if !bytes.Equal(b1, b2) || len(after.Rows) != 500 {
		t.Fatalf("data differs after round trip (%d rows)", len(after.Rows))
	}
	if after.Meta.DatabaseVersion <= before.Meta.DatabaseVersion {
		t.Fatalf("import did not advance the version")
	}
}

func zipOf(t *testing.T, entries map[string][]byte, method uint16) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}

func TestHostileArchivesAreRefusedAndChangeNothing(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	mustAct(t, s, databases.DatabaseAction{Type: "execute", SQL: "INSERT INTO t(name) VALUES('keep')"})
	good, _, _ := exportArchive(t, s)
	zr, _ := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	var dbBytes, manifest []byte
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == archive.DatabaseEntry {
			dbBytes = b
		} else {
			manifest = b
		}
	}
	hostile := map[string][]byte{
		"zip bomb":         zipOf(t, map[string][]byte{archive.DatabaseEntry: append(append([]byte{}, dbBytes[:100]...), make([]byte, 64<<20)...), archive.ManifestEntry: manifest}, zip.Deflate),
		"path traversal":   zipOf(t, map[string][]byte{"../database.sqlite": dbBytes, archive.ManifestEntry: manifest}, zip.Deflate),
		"extra entry":      zipOf(t, map[string][]byte{archive.DatabaseEntry: dbBytes, archive.ManifestEntry: manifest, "x": nil}, zip.Deflate),
		"not sqlite":       zipOf(t, map[string][]byte{archive.DatabaseEntry: bytes.Repeat([]byte("hello"), 1000), archive.ManifestEntry: manifest}, zip.Deflate),
		"corrupt sqlite":   zipOf(t, map[string][]byte{archive.DatabaseEntry: append(append([]byte{}, dbBytes[:4096]...), bytes.Repeat([]byte{0xAB}, len(dbBytes)-4096)...), archive.ManifestEntry: manifest}, zip.Store),
		"truncated":        good[:len(good)/2],
		"not a zip at all": []byte("just text"),
	}
	for name, b := range hostile {
		t.Run(name, func(t *testing.T) {
			tr := importArchive(t, s, b, 1)
			if tr.Status != databases.TransferFailed || !strings.HasPrefix(tr.Error, "archive_invalid: ") {
				t.Fatalf("%+v", tr)
			}
			if _, _, err := s.Archive(ctx(), scope, tr.ID); code(err) != apierr.ArchiveInvalid {
				t.Fatalf("archive of a refused import: %v", err)
			}
			res, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: "SELECT name FROM t"})
			if err != nil || len(res.Rows) != 1 {
				t.Fatalf("database changed: %+v %v", res, err)
			}
		})
	}
}

func TestAMissingPartIsRefusedAtCompleteAndADifferentPartConflicts(t *testing.T) {
	s := provisioned(t, databases.DefaultLimits)
	good, _, _ := exportArchive(t, s)
	sum := sha256.Sum256(good)
	tr, _ := s.CreateTransfer(ctx(), scope, databases.CreateTransferRequest{Direction: "import", PartCount: 2, SHA256: hex.EncodeToString(sum[:])})
	if err := s.PutPart(ctx(), scope, tr.ID, 1, good[:100]); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPart(ctx(), scope, tr.ID, 1, good[:101]); code(err) != apierr.Conflict {
		t.Fatalf("different bytes: %v", err)
	}
	if _, err := s.GetTransfer(ctx(), databases.Scope{AccountID: scope.AccountID, ProjectID: "prj_other"}, tr.ID); code(err) != apierr.NotFound {
		t.Fatalf("other project sees the transfer: %v", err)
	}
	if _, err := s.CompleteImport(ctx(), scope, tr.ID); code(err) != apierr.ArchiveInvalid {
		t.Fatalf("complete with part 2 missing: %v", err)
	}
	got, _ := s.GetTransfer(ctx(), scope, tr.ID)
	if got.Status != databases.TransferAwaitingParts {
		t.Fatalf("the import must keep waiting for the missing part: %+v", got)
	}
}

// A query or an action without a loop still ends at its deadline: one row
// of a hundred 4 MB random blobs took 14–19 s of CPU before. The bound is
// generous (the deadline plus 2 s); it proves the stop, not a speed.
func TestAStatementWithoutALoopEndsAtItsDeadline(t *testing.T) {
	lim := databases.DefaultLimits
	lim.QueryTimeout = 300 * time.Millisecond
	s := provisioned(t, lim)
	heavy := "SELECT " + strings.Repeat("length(randomblob(4000000)), ", 100) + "1"
	for name, run := range map[string]func() error{
		"query": func() error { _, err := s.Query(ctx(), scope, databases.QueryRequest{SQL: heavy}); return err },
		"action": func() error {
			_, err := s.Actions(ctx(), scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{{Type: "execute", SQL: "INSERT INTO t(score) SELECT " + strings.Repeat("length(randomblob(4000000)) + ", 100) + "0"}}})
			return err
		},
	} {
		start := time.Now()
		err := run()
		if took := time.Since(start); code(err) != apierr.QueryTimeout || took > lim.QueryTimeout+2*time.Second {
			t.Errorf("%s: %v after %v; want query_timeout within its deadline plus a fraction of a second", name, err, took)
		}
	}
}
