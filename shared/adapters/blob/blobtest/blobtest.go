// Package blobtest is the conformance suite of the blob port, in the manner of
// gocloud.dev's drivertest: fsblob and s3blob run the same rules, and what an
// adapter cannot do is declared by its harness, never guessed by the suite.
// It must test the port only, never an adapter's internals.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"time"

	"platformapi/shared/adapters/blob"
)

// Harness makes fresh buckets and declares the adapter's capabilities.
type Harness struct {
	// New returns an empty bucket; it registers its own cleanup.
	New func(t *testing.T) blob.Bucket
	// CanPresign says PresignGet returns a working URL rather than
	// blob.ErrNotSupported.
	CanPresign bool
	// LargeSize is an object size that takes the adapter's large-object path
	// (multipart uploads, say); 0 uses a few MiB.
	LargeSize int
	// ManyObjects is a number of objects that makes List take more than one
	// page of the adapter's listing; 0 uses 7.
	ManyObjects int
}

type rule struct {
	name string
	run  func(t *testing.T, h Harness, b blob.Bucket)
}

// RunConformance runs every rule against fresh buckets.
func RunConformance(t *testing.T, h Harness) {
	if h.LargeSize == 0 {
		h.LargeSize = 6<<20 + 1
	}
	if h.ManyObjects == 0 {
		h.ManyObjects = 7
	}
	for _, group := range [][]rule{putRules, readRules, conditionRules, listRules, presignRules} {
		for _, r := range group {
			t.Run(r.name, func(t *testing.T) { r.run(t, h, h.New(t)) })
		}
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// payload returns n deterministic, incompressible-looking bytes.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func mustPut(t *testing.T, b blob.Bucket, key string, data []byte, opts blob.PutOptions) blob.Info {
	t.Helper()
	info, err := b.Put(ctx(t), key, bytes.NewReader(data), opts)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func read(t *testing.T, b blob.Bucket, key string) ([]byte, blob.Info) {
	t.Helper()
	rc, info, err := b.Get(ctx(t), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return data, info
}

func wantContent(t *testing.T, b blob.Bucket, key string, want []byte) {
	t.Helper()
	got, info := read(t, b, key)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s holds %d bytes (sha %s); want %d bytes (sha %s)", key, len(got), hexSHA(got), len(want), hexSHA(want))
	}
	if info.Size != int64(len(want)) || info.SHA256 != hexSHA(want) {
		t.Fatalf("%s info = size %d sha %s; want size %d sha %s", key, info.Size, info.SHA256, len(want), hexSHA(want))
	}
}

func wantAbsent(t *testing.T, b blob.Bucket, key string) {
	t.Helper()
	if _, err := b.Head(ctx(t), key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("head %s = %v; want ErrNotFound", key, err)
	}
	if rc, _, err := b.Get(ctx(t), key); !errors.Is(err, blob.ErrNotFound) {
		if rc != nil {
			rc.Close()
		}
		t.Fatalf("get %s = %v; want ErrNotFound", key, err)
	}
}

// failingReader yields n bytes and then fails, like a client that hangs up.
type failingReader struct {
	r io.Reader
}

var errClientGone = errors.New("client went away")

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errClientGone
	}
	return n, err
}
