package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
