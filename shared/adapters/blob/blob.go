// Package blob is the blob-store port: named byte objects with checksums we
// compute and verify ourselves (never trusting the backend to do it).
// Adapters: fsblob (embedded, the filesystem) and s3blob (S3). Both must pass
// blobtest.
package blob

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"
)

var (
	ErrNotFound = errors.New("blob: object not found")
	// ErrExists is returned by a Put with IfNotExists when the object exists.
	ErrExists = errors.New("blob: object already exists")
	// ErrChecksumMismatch means the written bytes did not hash to the expected
	// SHA-256; nothing was stored.
	ErrChecksumMismatch = errors.New("blob: checksum mismatch")
	ErrUnavailable      = errors.New("blob: backend unavailable")
	// ErrNotSupported is returned by adapters lacking an optional capability
	// (for example presigned URLs on the filesystem).
	ErrNotSupported = errors.New("blob: not supported by this adapter")
)

// Info describes a stored object.
type Info struct {
	Key         string
	Size        int64
	SHA256      string // lowercase hex, computed by us at write time
	ContentType string
	Metadata    map[string]string
	Modified    time.Time
}

// Entry is one object as a listing sees it. A listing carries no content
// type, metadata or hash (S3's does not); Head an entry for those.
type Entry struct {
	Key      string
	Size     int64
	Modified time.Time
}

// PutOptions refine a write.
type PutOptions struct {
	ContentType string
	Metadata    map[string]string
	// ExpectedSHA256 (lowercase hex), when set, must equal the hash of the
	// bytes read, or the write is abandoned with ErrChecksumMismatch.
	ExpectedSHA256 string
	// IfNotExists makes the write fail with ErrExists if the key is taken.
	IfNotExists bool
}

// Bucket is the blob-store port.
type Bucket interface {
	// Put streams r into key and returns the stored object's info. Partial
	// objects are never visible: a failed or mismatched write leaves nothing.
	Put(ctx context.Context, key string, r io.Reader, opts PutOptions) (Info, error)
	// Get opens the object; the caller closes the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	Head(ctx context.Context, key string) (Info, error)
	// Delete removes the object; deleting an absent object succeeds.
	Delete(ctx context.Context, key string) error
	// List yields every complete object whose key begins with prefix ("" for
	// all), in ascending byte order of keys; an error ends the sequence.
	// It is how a sweeper finds objects whose owning record never came (a
	// process that died between writing the object and its record).
	List(ctx context.Context, prefix string) iter.Seq2[Entry, error]
	// PresignGet returns a time-limited download URL, or ErrNotSupported.
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	Close() error
}
