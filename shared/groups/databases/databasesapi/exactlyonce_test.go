package databasesapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/engine"
	"platformapi/shared/harness/apitest"
)

// The crash point of an idempotent batch: SQLite has committed but the
// process died before the response was stored, so the claim expires (here:
// is gone) and the client retries with the same Idempotency-Key.
func TestABatchWhoseResponseWasLostWritesOnceWhenRetried(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rec := e.RootKey(1, nil)
		project := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "db"}}), 201).Str("id")
		c := caller{e: e, key: root, project: project}
		e.Must(c.do("POST", "/account", map[string]any{}), 201)
		e.Must(c.do("POST", "/actions", actions(map[string]any{"type": "migrate", "id": "001", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)"})), 200)

		idem := apitest.Idem()
		send := func(body any) *apitest.Resp {
			return e.Do(apitest.Req{Method: "POST", Path: "/v1/databases/actions", Key: root, Idem: idem, Body: body, Headers: map[string]string{"X-Service-Project": project}})
		}
		batch := actions(execute("INSERT INTO t(name) VALUES (?)", "once"))
		before := e.Balance(root)
		first := e.Must(send(batch), 200)
		charged := before - e.Balance(root)
		lost := store.Key{PK: "idem#" + rec.Str("id") + "#" + idem, SK: "idem"}
		if err := e.Store.Delete(context.Background(), lost); err != nil {
			t.Fatalf("dropping the stored response: %v", err)
		}
		retry := e.Must(send(batch), 200)
		if retry.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("the retry was replayed from the store: the crash point was not reached")
		}
		if !reflect.DeepEqual(retry.Body["results"], first.Body["results"]) || retry.Body["databaseVersion"] != first.Body["databaseVersion"] {
			t.Fatalf("retry answered %s, first %s", retry.Raw, first.Raw)
		}
		if spent := before - e.Balance(root); charged <= 0 || spent != charged {
			t.Fatalf("charged %v by the call, %v after its retry", charged, spent)
		}
		n := e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT count(*) AS n FROM t WHERE name = 'once'", "rowMode": "arrays"}), 200)
		if got := n.Body["rows"].([]any)[0].([]any)[0]; got != float64(1) {
			t.Fatalf("%v rows inserted", got)
		}

		if err := e.Store.Delete(context.Background(), lost); err != nil {
			t.Fatal(err)
		}
		e.Must(send(actions(execute("INSERT INTO t(name) VALUES (?)", "other"))), 409, "idempotency_key_reused")
	}, withDatabases)
}

func TestABatchThatChangesNothingKeepsTheDatabaseVersion(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		version := e.Must(c.do("GET", "/account", nil), 200).Body["version"]
		again := e.Must(c.do("POST", "/actions", actions(map[string]any{"type": "migrate", "id": "001", "sql": "CREATE TABLE t(x)"})), 200)
		if again.Body["databaseVersion"] != version || !again.Body["results"].([]any)[0].(map[string]any)["skipped"].(bool) {
			t.Fatalf("version %v, skipped batch answered %s", version, again.Raw)
		}
		guarded := actions(execute("DELETE FROM t"))
		guarded["ifVersion"] = version
		e.Must(c.do("POST", "/actions", guarded), 200)
	}, withDatabases)
}

// rss is the test process's resident memory (the server runs in it), from
// /proc; 0 where there is none.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func TestAReadOnlyQueryCannotExhaustTheServersMemory(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		reader, _ := e.Child(c.key, map[string]any{"scopes": []string{"databases:read"}})
		r := caller{e: e, key: reader, project: c.project}
		rssBefore, heapBefore := rss(), engine.MemoryUsed()
		for _, sql := range []string{
			"SELECT length(zeroblob(999999999) || x'00')",
			"SELECT zeroblob(250000000)",
		} {
			e.Must(r.do("POST", "/query", map[string]any{"sql": sql}), 400, "sql_error")
		}
		var wg sync.WaitGroup
		statuses := make([]int, 4)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = r.do("POST", "/query", map[string]any{"sql": "SELECT randomblob(100000000)"}).Status
			}()
		}
		wg.Wait()
		for _, s := range statuses {
			if s != 400 {
				t.Errorf("concurrent randomblob: statuses %v, want 400 each", statuses)
				break
			}
		}
		e.Must(c.do("POST", "/actions", actions(execute("INSERT INTO t(name) VALUES (randomblob(100000000))"))), 400, "sql_error")
		rssAfter, heapAfter := rss(), engine.MemoryUsed()
		t.Logf("SQLite heap %d -> %d bytes, RSS %d -> %d MiB, concurrent statuses %v", heapBefore, heapAfter, rssBefore>>20, rssAfter>>20, statuses)
		if rssBefore > 0 && rssAfter-rssBefore > 64<<20 {
			t.Errorf("RSS grew by %d MiB", (rssAfter-rssBefore)>>20)
		}
		if heapAfter-heapBefore > 8<<20 {
			t.Errorf("SQLite holds %d bytes more", heapAfter-heapBefore)
		}
	}, withDatabases)
}

func TestAQueryCannotRevealTheServersFilePath(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		for _, sql := range []string{"SELECT * FROM pragma_database_list", "SELECT file FROM pragma_database_list()", "PRAGMA database_list"} {
			res := e.Must(c.do("POST", "/query", map[string]any{"sql": sql}), 403, "query_not_readonly")
			if strings.Contains(string(res.Raw), ".sqlite") {
				t.Fatalf("%s: %s", sql, res.Raw)
			}
		}
	}, withDatabases)
}

// sqliteFile is a database made by sql, as the bytes of its file.
func sqliteFile(t *testing.T, sql string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "import.sqlite")
	c, err := engine.Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
	c.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAnImportWhoseMigrationsTableIsUnusableFailsWith422(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		e.StartWorker(databases.Queue.Consumer)
		for name, sql := range map[string]string{
			"a view":        "CREATE TABLE u(a); CREATE VIEW _migrations AS SELECT 'x' AS id, 'y' AS appliedAt",
			"other columns": "CREATE TABLE _migrations(id TEXT PRIMARY KEY, appliedAt TEXT NOT NULL, who TEXT NOT NULL)",
			"a trigger":     "CREATE TABLE _migrations(id TEXT PRIMARY KEY, appliedAt TEXT NOT NULL); CREATE TRIGGER tr BEFORE INSERT ON _migrations BEGIN SELECT RAISE(ABORT, 'no'); END",
		} {
			t.Run(name, func(t *testing.T) {
				body := zipOf(t, map[string][]byte{archive.DatabaseEntry: sqliteFile(t, sql), archive.ManifestEntry: []byte("{}")})
				sum := sha256.Sum256(body)
				id := e.Must(c.do("POST", "/transfers", map[string]any{"direction": "import", "partCount": 1, "sha256": hex.EncodeToString(sum[:])}), 202).Str("id")
				e.Must(c.part(id, 1, body), 200)
				e.Must(c.do("POST", "/transfers/"+id+"/complete", map[string]any{}), 202)
				r := waitFor(t, c, id, "completed", "failed")
				if r.Str("status") != "failed" || !strings.HasPrefix(r.Str("error"), "archive_invalid") || !strings.Contains(r.Str("error"), "_migrations") {
					t.Fatalf("import: %s", r.Raw)
				}
				e.Must(c.do("GET", "/transfers/"+id+"/archive", nil), 422, "archive_invalid")
				e.Must(c.do("POST", "/actions", actions(map[string]any{"type": "migrate", "id": "002-" + name, "sql": "CREATE TABLE IF NOT EXISTS v(a)"})), 200)
			})
		}
	}, withDatabases)
}
