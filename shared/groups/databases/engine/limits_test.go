package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rss is the process's resident memory, from /proc (0 where there is none).
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

func TestNoStatementHoldsMoreMemoryThanTheLimitsAllow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	w, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Exec(ctx, "CREATE TABLE t(a)"); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rssBefore, heapBefore := rss(), MemoryUsed()
	for _, tc := range []struct {
		sql  string
		code int
	}{
		{"SELECT length(zeroblob(999999999) || x'00')", CodeTooBig},
		{"SELECT zeroblob(250000000)", CodeTooBig},
		{"SELECT randomblob(100000000)", CodeTooBig},
		{"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM g WHERE n < 100) SELECT group_concat(hex(zeroblob(500000))) FROM g", CodeTooBig},
		// Every column within the value limit, the row beyond the heap limit.
		{"SELECT " + strings.Repeat("hex(zeroblob(2000000)), ", HeapLimit/4000000+10) + "1", CodeNoMem},
	} {
		st, _, err := c.Prepare(tc.sql, ReadOnly)
		if err == nil {
			_, err = st.Step(ctx)
			st.Close()
		}
		if !IsCode(err, tc.code) {
			t.Errorf("%.60s: %v, want code %d", tc.sql, err, tc.code)
		}
	}
	rssAfter, heapAfter := rss(), MemoryUsed()
	t.Logf("SQLite heap %d -> %d bytes, RSS %d -> %d MiB", heapBefore, heapAfter, rssBefore>>20, rssAfter>>20)
	if heapAfter-heapBefore > 1<<20 {
		t.Errorf("SQLite still holds %d bytes more after the statements", heapAfter-heapBefore)
	}
	if rssBefore > 0 && rssAfter-rssBefore > 64<<20 {
		t.Errorf("RSS grew by %d MiB", (rssAfter-rssBefore)>>20)
	}
}

// A statement without a loop is stopped by its deadline too: SQLite checks
// an interrupt only where its program jumps, so a single row of many
// expensive values (randomblob, replace, concatenation) would otherwise run
// to its end, minutes at the SQL length limit. The test's bound is generous
// (the deadline plus 2 s, against the 10 s the statement takes unstopped on
// a quiet machine); it proves the stop, not a speed.
func TestADeadlineStopsAStatementWithoutALoop(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "x.db"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, sql := range []string{
		"SELECT " + strings.Repeat("length(randomblob(4000000)), ", 100) + "1",
		"SELECT " + strings.Repeat("length(replace(hex(zeroblob(1000000)),'0','1')), ", 150) + "1",
		"SELECT " + strings.Repeat("length(zeroblob(4000000)||x'00'), ", 1500) + "1",
	} {
		st, _, err := c.Prepare(sql, ReadOnly)
		if err != nil {
			t.Fatal(err)
		}
		const deadline = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		_, err = st.Step(ctx)
		took := time.Since(start)
		cancel()
		st.Close()
		if !IsCode(err, CodeInterrupt) {
			t.Errorf("%.50s: %v; want the interrupt", sql, err)
		}
		if took > deadline+2*time.Second {
			t.Errorf("%.50s: stopped after %v; want within its deadline plus a fraction of a second", sql, took)
		}
		// The connection is whole again for the next statement.
		if v, err := c.QueryText(context.Background(), "SELECT hex(zeroblob(100000))"); err != nil || len(v) != 200000 {
			t.Fatalf("after the stop: %d bytes, %v", len(v), err)
		}
	}
}
