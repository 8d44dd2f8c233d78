package diskuse_test

import (
	"os"
	"path/filepath"
	"testing"

	"platformapi/shared/base/diskuse"
)

// A sparse file counts for the blocks it holds, not for its apparent size,
// and written data does count.
func TestAllocatedCountsBlocksNotApparentSize(t *testing.T) {
	dir := t.TempDir()
	sparse, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	if err := os.WriteFile(filepath.Join(dir, "data"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := diskuse.Allocated(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n < 1<<20 || n >= 64<<20 {
		t.Fatalf("allocated %d bytes; want at least the 1 MiB written and far less than the 64 MiB sparse file", n)
	}
}
