package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestTheReadOnlyPolicyRefusesAtPrepareTime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	c, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(ctx, "CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES(1, 'x')"); err != nil {
		t.Fatal(err)
	}
	st, tail, err := c.Prepare("SELECT a, b FROM t -- c\n", ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tail %q cols %v", tail, st.Columns())
	for {
		ok, err := st.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		t.Log(st.Value(0), st.Value(1))
	}
	st.Close()
	for _, q := range []string{"INSERT INTO t VALUES(2,'y')", "ATTACH ':memory:' AS m", "PRAGMA query_only=0", "SELECT load_extension('x')", "BEGIN"} {
		_, _, err := c.Prepare(q, ReadOnly)
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("%s: %v", q, err)
		}
		t.Log(q, err)
	}
	t.Log(LibVersion())
}
