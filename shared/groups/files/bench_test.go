package files

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/store/boltstore"
)

// embeddedRepo is the repository of make run: bbolt and the filesystem,
// with a quota that a benchmark never reaches.
func embeddedRepo(b *testing.B) *Repo {
	dir := b.TempDir()
	st, err := boltstore.Open(filepath.Join(dir, "platform.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	bucket, err := fsblob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	return NewRepo(Config{Store: st, Bucket: bucket, Now: time.Now, Quota: Quota{MaxFiles: math.MaxInt64, MaxBytes: math.MaxInt64}})
}

func maxFile() []byte {
	data := make([]byte, MaxSize)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return data
}

// BenchmarkCreate4MiB is the upload of a largest file with its checksum
// header: hash while streaming, fsync the object, one bbolt transaction.
func BenchmarkCreate4MiB(b *testing.B) {
	r, data := embeddedRepo(b), maxFile()
	u := Upload{Filename: "max.bin", ContentType: "application/octet-stream", SHA256: hexSHA(data)}
	b.SetBytes(MaxSize)
	for b.Loop() {
		if _, err := r.Create(context.Background(), "acct_bench", "prj_bench", bytes.NewReader(data), u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen4MiB is the download of a largest file: the record, the
// object read whole and its SHA-256 checked.
func BenchmarkOpen4MiB(b *testing.B) {
	r, data := embeddedRepo(b), maxFile()
	f, err := r.Create(context.Background(), "acct_bench", "prj_bench", bytes.NewReader(data), Upload{Filename: "max.bin"})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(MaxSize)
	for b.Loop() {
		if _, _, err := r.Open(context.Background(), "acct_bench", "prj_bench", f.ID); err != nil {
			b.Fatal(err)
		}
	}
}
