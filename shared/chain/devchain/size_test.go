package devchain_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"platformapi/shared/chain/devchain"
)

// maxFreshChainBytes bounds the disk a fresh local chain takes: every
// local start (and every test) makes one.
const maxFreshChainBytes = 64 << 20

// allocated is the disk space the files under dir take (their allocated
// blocks, as du counts them, not their apparent sizes: pebble preallocates
// its write-ahead logs).
func allocated(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A fresh chain, open with its contracts deployed, takes at most 64 MB of
// disk (a mainnet-sized database cache made it 1.2 GB of preallocated
// write-ahead logs).
func TestAFreshChainTakesAtMost64MBOfDisk(t *testing.T) {
	dir := t.TempDir()
	dev, err := devchain.Open(context.Background(), dir, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	got := allocated(t, dir)
	t.Logf("a fresh chain's directory takes %d KiB", got>>10)
	if got > maxFreshChainBytes {
		t.Fatalf("a fresh chain's directory takes %d MiB, more than %d", got>>20, maxFreshChainBytes>>20)
	}
}
