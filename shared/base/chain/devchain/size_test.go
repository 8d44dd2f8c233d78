package devchain_test

import (
	"context"
	"testing"

	"platformapi/shared/base/chain/devchain"
	"platformapi/shared/base/diskuse"
)

// maxFreshChainBytes bounds the disk a fresh local chain takes: every
// local start (and every test) makes one.
const maxFreshChainBytes = 64 << 20

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
	got, err := diskuse.Allocated(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a fresh chain's directory takes %d KiB", got>>10)
	if got > maxFreshChainBytes {
		t.Fatalf("a fresh chain's directory takes %d MiB, more than %d", got>>20, maxFreshChainBytes>>20)
	}
}
