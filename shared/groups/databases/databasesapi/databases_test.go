package databasesapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/databasesapi/dbtest"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/harness/apitest"
)

var withDatabases = apitest.Options{Parts: []apitest.Part{dbtest.On(0)}}

// caller is a key, optionally selecting a project.
type caller struct {
	e       *apitest.Env
	key     string
	project string
}

func (c caller) do(method, path string, body any) *apitest.Resp {
	c.e.T.Helper()
	return c.e.Do(c.req(method, path, body))
}

// req is the request do sends: the caller's key and project, and a fresh
// Idempotency-Key on every write.
func (c caller) req(method, path string, body any) apitest.Req {
	r := apitest.Req{Method: method, Path: "/v1/databases" + path, Key: c.key, Body: body, Headers: map[string]string{}}
	if c.project != "" {
		r.Headers["X-Service-Project"] = c.project
	}
	if method != "GET" && path != "/query" {
		r.Idem = apitest.Idem()
	}
	return r
}

func (c caller) part(transferID string, n int, b []byte) *apitest.Resp {
	c.e.T.Helper()
	r := apitest.Req{Method: "PUT", Path: "/v1/databases/transfers/" + transferID + "/parts/" + strconv.Itoa(n), Key: c.key, Body: b,
		Idem: apitest.Idem(), Headers: map[string]string{"Content-Type": "application/zip"}}
	if c.project != "" {
		r.Headers["X-Service-Project"] = c.project
	}
	return c.e.Do(r)
}

func execute(sql string, params ...any) map[string]any {
	a := map[string]any{"type": "execute", "sql": sql}
	if len(params) > 0 {
		a["params"] = params
	}
	return a
}

func actions(list ...map[string]any) map[string]any { return map[string]any{"actions": list} }

// setup provisions a database with a table of three rows in a project of a
// fresh account and returns its root key selecting that project.
func setup(t *testing.T, e *apitest.Env) (c caller, project string) { return setupFunded(t, e, 1) }

// setupFunded is setup on an account of the given credits.
func setupFunded(t *testing.T, e *apitest.Env, credits int64) (c caller, project string) {
	root, _ := e.RootKey(credits, nil)
	project = e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "db"}}), 201).Str("id")
	c = caller{e: e, key: root, project: project}
	db := e.Must(c.do("POST", "/account", map[string]any{}), 201)
	if db.Str("status") != "active" || db.Str("engine") != "sqlite" || db.Header.Get("Location") != "/v1/databases/account" {
		t.Fatalf("provision: %s", db.Raw)
	}
	e.Must(c.do("POST", "/actions", actions(
		map[string]any{"type": "migrate", "id": "001", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)"},
		execute("INSERT INTO t(name) VALUES (?), (?), (?)", "a", "b", "c"))), 200)
	return c, project
}

func rows(t *testing.T, c caller) []any {
	t.Helper()
	r := c.e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT name FROM t ORDER BY id", "rowMode": "arrays"}), 200)
	return r.Body["rows"].([]any)
}

func micro(credits float64) int64 { return int64(math.Round(credits * 1e6)) }

func waitFor(t *testing.T, c caller, id string, statuses ...string) *apitest.Resp {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := c.e.Must(c.do("GET", "/transfers/"+id, nil), 200)
		for _, s := range statuses {
			if r.Str("status") == s {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer still %s", r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEveryEndpointReachesOnlyTheRequestsOwnScope(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		owner, project := setup(t, e)
		e.StartWorker(databases.Queue.Consumer)
		export := e.Must(owner.do("POST", "/transfers", map[string]any{"direction": "export"}), 202).Str("id")
		imp := e.Must(owner.do("POST", "/transfers", map[string]any{"direction": "import", "partCount": 1, "sha256": hex.EncodeToString(make([]byte, 32))}), 202).Str("id")
		waitFor(t, owner, export, "ready")

		otherAccount, _ := e.RootKey(1, nil)
		otherProject := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: owner.key, Idem: apitest.Idem(), Body: map[string]any{"name": "other"}}), 201).Str("id")
		boundElsewhere, _ := e.Child(owner.key, map[string]any{"projectId": otherProject})
		strangers := map[string]caller{
			"another account":                   {e: e, key: otherAccount},
			"the same account at account level": {e: e, key: owner.key},
			"another project of the account":    {e: e, key: owner.key, project: otherProject},
			"a key bound to another project":    {e: e, key: boundElsewhere},
		}
		for name, s := range strangers {
			t.Run(name, func(t *testing.T) {
				for _, r := range []*apitest.Resp{
					s.do("GET", "/account", nil),
					s.do("DELETE", "/account", nil),
					s.do("POST", "/query", map[string]any{"sql": "SELECT 1"}),
					s.do("POST", "/actions", actions(execute("CREATE TABLE x(a)"))),
					s.do("POST", "/transfers", map[string]any{"direction": "export"}),
					s.do("GET", "/transfers/"+export, nil),
					s.do("GET", "/transfers/"+export+"/archive", nil),
					s.do("DELETE", "/transfers/"+imp, nil),
					s.part(imp, 1, []byte("PK")),
					s.do("POST", "/transfers/"+imp+"/complete", map[string]any{}),
				} {
					if r.Status != 404 || r.Code() != "not_found" {
						t.Fatalf("got %d %s, want 404 not_found", r.Status, r.Raw)
					}
				}
			})
		}
		// A key bound to the project reaches it; naming another project is refused.
		bound, _ := e.Child(owner.key, map[string]any{"projectId": project})
		if got := rows(t, caller{e: e, key: bound}); len(got) != 3 {
			t.Fatalf("bound key rows %v", got)
		}
		e.Must(caller{e: e, key: bound, project: otherProject}.do("GET", "/account", nil), 403, "project_denied")
		// A read-only key cannot write.
		reader, _ := e.Child(owner.key, map[string]any{"scopes": []string{"databases:read"}})
		e.Must(caller{e: e, key: reader, project: project}.do("POST", "/actions", actions(execute("DELETE FROM t"))), 403, "scope_denied")
		if len(rows(t, owner)) != 3 {
			t.Fatal("data changed")
		}
	}, withDatabases)
}

func TestProvisioningIsOncePerScopeAndDeprovisioningForgetsTheData(t *testing.T) {
	e := apitest.New(t, withDatabases)
	c, _ := setup(t, e)
	e.Must(c.do("POST", "/account", map[string]any{}), 409, "database_exists")
	got := e.Must(c.do("GET", "/account", nil), 200)
	if got.Body["version"].(float64) < 1 || got.Body["sizeBytes"].(float64) <= 0 {
		t.Fatalf("read: %s", got.Raw)
	}
	if r := e.Must(c.do("DELETE", "/account", nil), 200); r.Str("status") != "deleted" {
		t.Fatalf("deprovision: %s", r.Raw)
	}
	e.Must(c.do("GET", "/account", nil), 404, "not_found")
	e.Must(c.do("POST", "/account", map[string]any{}), 201)
	e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT * FROM t"}), 400, "sql_error")
}

func TestAQueryThatWouldChangeAnythingIs403AndChangesNothing(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		before := e.Must(c.do("GET", "/account", nil), 200).Body["version"]
		for _, sql := range []string{
			"INSERT INTO t(name) VALUES ('x')",
			"DELETE FROM t",
			"UPDATE t SET name = 'x'",
			"DROP TABLE t",
			"CREATE TABLE u(a)",
			"ATTACH DATABASE '/tmp/x.db' AS x",
			"PRAGMA user_version = 7",
			"SELECT load_extension('x')",
			"WITH d AS (DELETE FROM t RETURNING id) SELECT 1",
		} {
			r := c.do("POST", "/query", map[string]any{"sql": sql})
			if r.Status != 403 || r.Code() != "query_not_readonly" {
				if !(r.Status == 400 && r.Code() == "sql_error") { // a parse error refuses it too
					t.Fatalf("%s: %d %s", sql, r.Status, r.Raw)
				}
			}
		}
		if len(rows(t, c)) != 3 || e.Must(c.do("GET", "/account", nil), 200).Body["version"] != before {
			t.Fatal("a refused query changed the database")
		}
		r := e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT id, name FROM t WHERE name = :n", "params": map[string]any{"n": "b"}}), 200)
		if r.Body["rows"].([]any)[0].(map[string]any)["name"] != "b" {
			t.Fatalf("named params: %s", r.Raw)
		}
	}, withDatabases)
}

func TestActionsApplyAllOrNothingAndAFailedBatchCostsNothing(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		version := e.Must(c.do("GET", "/account", nil), 200).Body["version"].(float64)
		balance := micro(e.Balance(c.key))
		e.Must(c.do("POST", "/actions", actions(
			execute("INSERT INTO t(name) VALUES ('d')"),
			execute("INSERT INTO nope VALUES (1)"))), 400, "sql_error")
		e.Must(c.do("POST", "/actions", actions(execute("BEGIN"))), 400, "sql_error")
		e.Must(c.do("POST", "/actions", map[string]any{"ifVersion": version - 1, "actions": []any{execute("DELETE FROM t")}}), 409, "database_version_mismatch")
		if spent := balance - micro(e.Balance(c.key)); spent != 0 {
			t.Fatalf("failed batches were charged %d micro-credits", spent)
		}
		if len(rows(t, c)) != 3 {
			t.Fatal("a failed batch left rows behind")
		}
		r := e.Must(c.do("POST", "/actions", map[string]any{"ifVersion": version, "actions": []any{
			execute("INSERT INTO t(name) VALUES ('d')"), execute("UPDATE t SET name = upper(name) WHERE id <= 2")}}), 200)
		res := r.Body["results"].([]any)
		if res[0].(map[string]any)["changes"].(float64) != 1 || res[1].(map[string]any)["changes"].(float64) != 2 || r.Body["databaseVersion"].(float64) != version+1 {
			t.Fatalf("batch: %s", r.Raw)
		}
	}, withDatabases)
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("credits %q: %v", s, err)
	}
	return f
}

func TestQueriesAndActionsAreChargedExactlyPerRow(t *testing.T) {
	e := apitest.New(t, withDatabases)
	c, _ := setup(t, e)
	for _, tc := range []struct {
		name string
		send func() *apitest.Resp
		cost func(r *apitest.Resp) int64
	}{
		{"query: one micro-credit per row read", func() *apitest.Resp {
			return e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT * FROM t"}), 200)
		}, func(r *apitest.Resp) int64 { return int64(r.Body["meta"].(map[string]any)["rowsRead"].(float64)) }},
		{"actions: one per row read, ten per row written", func() *apitest.Resp {
			return e.Must(c.do("POST", "/actions", actions(execute("INSERT INTO t(name) SELECT name FROM t"))), 200)
		}, func(r *apitest.Resp) int64 {
			m := r.Body["meta"].(map[string]any)
			return int64(m["rowsRead"].(float64)) + 10*int64(m["rowsWritten"].(float64))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := micro(e.Balance(c.key))
			r := tc.send()
			want := tc.cost(r)
			if want <= 0 || micro(mustFloat(t, r.Header.Get("X-Service-Credits-Charged"))) != want {
				t.Fatalf("charged %q, want %d micro-credits: %s", r.Header.Get("X-Service-Credits-Charged"), want, r.Raw)
			}
			if spent := before - micro(e.Balance(c.key)); spent != want {
				t.Fatalf("balance fell by %d, want %d", spent, want)
			}
		})
	}
}

func TestABalanceBelowTheMaximumChargeIs402BeforeAnythingRuns(t *testing.T) {
	e := apitest.New(t, withDatabases)
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{"label": "poor"},
		Headers: map[string]string{"X-Service-Credit-Token": e.TokenMicro(40_000)}}), 201) // 0.04 < 0.05 (query) < 0.1 (actions)
	c := caller{e: e, key: r.Str("secret")}
	e.Must(c.do("POST", "/account", map[string]any{}), 201)
	e.Must(c.do("POST", "/actions", actions(execute("CREATE TABLE t(a)"))), 402, "insufficient_credits")
	e.Must(c.do("POST", "/query", map[string]any{"sql": "SELECT 1"}), 402, "insufficient_credits")
	if v := e.Must(c.do("GET", "/account", nil), 200).Body["version"].(float64); v != 0 {
		t.Fatalf("a refused batch ran: version %v", v)
	}
	if b := micro(e.Balance(c.key)); b != 40_000 {
		t.Fatalf("balance %d", b)
	}
}

func TestAnExportImportsBackThroughHTTPWithAVerifiedSignature(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		src, _ := setup(t, e)
		e.StartWorker(databases.Queue.Consumer)
		key := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/health"}), 200).Str("archivePublicKey")
		// The archive's signature verifies with it below: it is the key
		// the transfers sign with.
		if !strings.HasPrefix(key, "ed25519:") {
			t.Fatalf("/health archivePublicKey %q", key)
		}
		id := e.Must(src.do("POST", "/transfers", map[string]any{"direction": "export"}), 202).Str("id")
		waitFor(t, src, id, "ready")
		a := e.Must(src.do("GET", "/transfers/"+id+"/archive", nil), 200)
		sum := sha256.Sum256(a.Raw)
		hexSum := hex.EncodeToString(sum[:])
		// The signed statement names the account; the manifest says which.
		account, _ := manifestOf(t, a.Raw)["accountId"].(string)
		if account == "" || manifestOf(t, a.Raw)["transferId"] != id {
			t.Fatalf("manifest %v", manifestOf(t, a.Raw))
		}
		if a.Header.Get("Content-Type") != "application/zip" || a.Header.Get("X-Content-Sha256") != hexSum ||
			a.Header.Get("X-Service-Archive-Public-Key") != key ||
			!archive.Verify(key, a.Header.Get("X-Service-Archive-Signature"), id, account, hexSum, int64(len(a.Raw))) {
			t.Fatalf("archive headers %v (account %q)", a.Header, account)
		}

		dst := caller{e: e, key: src.key, project: e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: src.key, Idem: apitest.Idem(), Body: map[string]any{"name": "copy"}}), 201).Str("id")}
		e.Must(dst.do("POST", "/account", map[string]any{}), 201)
		imp := e.Must(dst.do("POST", "/transfers", map[string]any{"direction": "import", "partCount": 2, "sha256": hexSum}), 202)
		if imp.Str("status") != "awaiting_parts" {
			t.Fatalf("import: %s", imp.Raw)
		}
		half := len(a.Raw) / 2
		e.Must(dst.part(imp.Str("id"), 1, a.Raw[:half]), 200)
		e.Must(dst.part(imp.Str("id"), 1, a.Raw[:half]), 200) // resent: a no-op
		e.Must(dst.part(imp.Str("id"), 2, a.Raw[half:]), 200)
		e.Must(dst.do("POST", "/transfers/"+imp.Str("id")+"/complete", map[string]any{}), 202)
		done := waitFor(t, dst, imp.Str("id"), "completed", "failed")
		if done.Str("status") != "completed" {
			t.Fatalf("import: %s", done.Raw)
		}
		if got := rows(t, dst); len(got) != 3 || got[2].([]any)[0] != "c" {
			t.Fatalf("imported rows %v", got)
		}
		// The migration came along: it does not run again.
		r := e.Must(dst.do("POST", "/actions", actions(map[string]any{"type": "migrate", "id": "001", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)"})), 200)
		if r.Body["results"].([]any)[0].(map[string]any)["skipped"] != true {
			t.Fatalf("migration ran twice: %s", r.Raw)
		}
	}, withDatabases)
}

func TestAHostileArchiveFailsTheImportWith422AndLeavesTheDataAlone(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		c, _ := setup(t, e)
		e.StartWorker(databases.Queue.Consumer)
		for name, body := range map[string][]byte{
			"not a zip":  []byte("definitely not a zip archive"),
			"not sqlite": zipOf(t, map[string][]byte{archive.DatabaseEntry: []byte("hello, not a database"), archive.ManifestEntry: []byte("{}")}),
			"traversal":  zipOf(t, map[string][]byte{"../../database.sqlite": []byte("SQLite format 3\x00"), archive.ManifestEntry: []byte("{}")}),
		} {
			t.Run(name, func(t *testing.T) {
				sum := sha256.Sum256(body)
				id := e.Must(c.do("POST", "/transfers", map[string]any{"direction": "import", "partCount": 1, "sha256": hex.EncodeToString(sum[:])}), 202).Str("id")
				e.Must(c.part(id, 1, body), 200)
				e.Must(c.do("POST", "/transfers/"+id+"/complete", map[string]any{}), 202)
				r := waitFor(t, c, id, "completed", "failed")
				if r.Str("status") != "failed" || len(r.Str("error")) < len("archive_invalid") || r.Str("error")[:15] != "archive_invalid" {
					t.Fatalf("hostile import: %s", r.Raw)
				}
				e.Must(c.do("GET", "/transfers/"+id+"/archive", nil), 422, "archive_invalid")
				if len(rows(t, c)) != 3 {
					t.Fatal("the database changed")
				}
			})
		}
		t.Run("a missing part", func(t *testing.T) {
			id := e.Must(c.do("POST", "/transfers", map[string]any{"direction": "import", "partCount": 2, "sha256": hex.EncodeToString(make([]byte, 32))}), 202).Str("id")
			e.Must(c.part(id, 1, []byte("PK")), 200)
			e.Must(c.do("POST", "/transfers/"+id+"/complete", map[string]any{}), 422, "archive_invalid")
			e.Must(c.do("DELETE", "/transfers/"+id, nil), 200)
		})
	}, withDatabases)
}

func TestPricingListsTheRowRatesAndTheEventsAreInTheCatalogue(t *testing.T) {
	e := apitest.New(t, withDatabases)
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/pricing"}), 200)
	found := 0
	for _, s := range r.Body["services"].([]any) {
		svc := s.(map[string]any)
		if svc["serviceId"] != "core-database" {
			continue
		}
		for _, o := range svc["operations"].([]any) {
			if rates, _ := o.(map[string]any)["rates"].([]any); len(rates) > 0 {
				found++
			}
		}
	}
	if found != 2 {
		t.Fatalf("pricing: %s", r.Raw)
	}
	for _, ev := range []string{"database.provisioned", "database.deprovisioned", databases.EventTransferCompleted, databases.EventTransferFailed} {
		if !webhooks.KnownEvent(ev) {
			t.Errorf("%s is not in the webhook catalogue", ev)
		}
	}
}
