package databases_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"platformapi/shared/groups/databases"
)

// benchService is a database with 10,000 indexed rows, and the path of the
// live file so the bare driver can read the same bytes.
func benchService(b *testing.B) (*databases.Service, string) {
	s, root := serviceIn(b, databases.DefaultLimits)
	db, err := s.Provision(ctx(), scope)
	if err != nil {
		b.Fatal(err)
	}
	_, err = s.Actions(ctx(), scope, databases.ActionsRequest{Actions: []databases.DatabaseAction{
		{Type: "migrate", ID: "1", SQL: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL); CREATE INDEX t_name ON t(name)"},
		{Type: "execute", SQL: "WITH RECURSIVE g(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM g WHERE v < 10000) INSERT INTO t(name, score) SELECT 'n' || v, v / 7.0 FROM g"},
	}})
	if err != nil {
		b.Fatal(err)
	}
	return s, filepath.Join(root, db.ID, "db-1.sqlite")
}

func bare(b *testing.B, path string) *sql.DB {
	d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

const pointRead = "SELECT id, name, score FROM t WHERE name = ?"
const scan = "SELECT id, name, score FROM t WHERE id <= 1000"

func BenchmarkPointReadAPI(b *testing.B) {
	s, _ := benchService(b)
	req := databases.QueryRequest{SQL: pointRead, Params: json.RawMessage(`["n4242"]`)}
	b.ResetTimer()
	for b.Loop() {
		if res, err := s.Query(ctx(), scope, req); err != nil || len(res.Rows) != 1 {
			b.Fatal(err)
		}
	}
}

func BenchmarkPointReadBare(b *testing.B) {
	_, path := benchService(b)
	d := bare(b, path)
	b.ResetTimer()
	for b.Loop() {
		var id int64
		var name string
		var score float64
		if err := d.QueryRow(pointRead, "n4242").Scan(&id, &name, &score); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan1000API(b *testing.B) {
	s, _ := benchService(b)
	req := databases.QueryRequest{SQL: scan, RowMode: "arrays"}
	b.ResetTimer()
	for b.Loop() {
		if res, err := s.Query(ctx(), scope, req); err != nil || len(res.Rows) != 1000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan1000Bare(b *testing.B) {
	_, path := benchService(b)
	d := bare(b, path)
	b.ResetTimer()
	for b.Loop() {
		rows, err := d.Query(scan)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id int64
			var name string
			var score float64
			if err := rows.Scan(&id, &name, &score); err != nil {
				b.Fatal(err)
			}
			n++
		}
		rows.Close()
		if n != 1000 {
			b.Fatal(n)
		}
	}
}

func BenchmarkOneRowActionAPI(b *testing.B) {
	s, _ := benchService(b)
	req := databases.ActionsRequest{Actions: []databases.DatabaseAction{{Type: "execute", SQL: "UPDATE t SET score = score + 1 WHERE id = ?", Params: json.RawMessage(`[42]`)}}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Actions(ctx(), scope, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOneRowActionBare(b *testing.B) {
	_, path := benchService(b)
	d, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	b.ResetTimer()
	for b.Loop() {
		tx, err := d.Begin()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec("UPDATE t SET score = score + 1 WHERE id = ?", 42); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
