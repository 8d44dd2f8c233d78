// Package fsblob is the embedded adapter of the blob port: one file per
// object under a directory. A write streams into a temporary file while
// hashing, and only a complete, verified file is renamed (or, for
// IfNotExists, hard-linked) into place, so a reader never sees a partial
// object. It must never map a key onto a path the key controls: files are
// named by the key's hash, which makes traversal impossible.
package fsblob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"platformapi/shared/adapters/blob"
)

var _ blob.Bucket = (*Bucket)(nil)

// Bucket is a blob.Bucket in a directory. It is safe for concurrent use, also
// by several processes sharing the directory.
type Bucket struct {
	objects, tmp string
}

// Open uses dir (created if needed) as a bucket.
func Open(dir string) (*Bucket, error) {
	b := &Bucket{objects: filepath.Join(dir, "objects"), tmp: filepath.Join(dir, "tmp")}
	for _, d := range []string{b.objects, b.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("fsblob: %w", err)
		}
	}
	return b, nil
}

func (b *Bucket) Close() error { return nil }

func (b *Bucket) path(key string) string {
	h := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(h[:])
	return filepath.Join(b.objects, name[:2], name)
}

func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, opts blob.PutOptions) (blob.Info, error) {
	if key == "" {
		return blob.Info{}, errors.New("fsblob: empty key")
	}
	final := b.path(key)
	if opts.IfNotExists {
		// Fail before reading a body that would be refused anyway; the
		// link below is what settles a race.
		if _, err := os.Stat(final); err == nil {
			return blob.Info{}, fmt.Errorf("%w: %s", blob.ErrExists, key)
		}
	}
	f, err := os.CreateTemp(b.tmp, "put-*")
	if err != nil {
		return blob.Info{}, fmt.Errorf("fsblob: %w", err)
	}
	defer os.Remove(f.Name())
	info, err := write(ctx, f, key, r, opts)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("fsblob: %w", cerr)
	}
	if err != nil {
		return blob.Info{}, err
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return blob.Info{}, fmt.Errorf("fsblob: %w", err)
	}
	if opts.IfNotExists {
		err = os.Link(f.Name(), final)
		if errors.Is(err, fs.ErrExist) {
			return blob.Info{}, fmt.Errorf("%w: %s", blob.ErrExists, key)
		}
	} else {
		err = os.Rename(f.Name(), final)
	}
	if err != nil {
		return blob.Info{}, fmt.Errorf("fsblob: %w", err)
	}
	return info, nil
}

// write fills f with the header and then the body, hashing as it goes, and
// refuses a body that does not match the expected hash.
func write(ctx context.Context, f *os.File, key string, r io.Reader, opts blob.PutOptions) (blob.Info, error) {
	info := blob.Info{Key: key, ContentType: opts.ContentType, Metadata: lowerKeys(opts.Metadata), Modified: time.Now().UTC()}
	if info.ContentType == "" {
		info.ContentType = "application/octet-stream"
	}
	// The header's size and hash are fixed-width placeholders until the
	// body has been read; rewriting them in place keeps one pass.
	if err := writeHeader(f, info); err != nil {
		return blob.Info{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), &ctxReader{ctx: ctx, r: r})
	if err != nil {
		return blob.Info{}, fmt.Errorf("fsblob: write %s: %w", key, err)
	}
	info.Size, info.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	if opts.ExpectedSHA256 != "" && !strings.EqualFold(opts.ExpectedSHA256, info.SHA256) {
		return blob.Info{}, fmt.Errorf("%w: %s", blob.ErrChecksumMismatch, key)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return blob.Info{}, fmt.Errorf("fsblob: %w", err)
	}
	if err := writeHeader(f, info); err != nil {
		return blob.Info{}, err
	}
	if err := f.Sync(); err != nil {
		return blob.Info{}, fmt.Errorf("fsblob: %w", err)
	}
	return info, nil
}

func lowerKeys(md map[string]string) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[strings.ToLower(k)] = v
	}
	return out
}

// ctxReader stops a long copy when the caller gives up.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, blob.Info{}, err
	}
	f, info, err := b.open(key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	return f, info, nil
}

func (b *Bucket) Head(ctx context.Context, key string) (blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	f, info, err := b.open(key)
	if err != nil {
		return blob.Info{}, err
	}
	f.Close()
	return info, nil
}

// open returns the object's file positioned at the start of its body.
func (b *Bucket) open(key string) (*os.File, blob.Info, error) {
	f, err := os.Open(b.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, blob.Info{}, fmt.Errorf("%w: %s", blob.ErrNotFound, key)
	}
	if err != nil {
		return nil, blob.Info{}, fmt.Errorf("fsblob: %w", err)
	}
	info, err := readHeader(f)
	if err != nil {
		f.Close()
		return nil, blob.Info{}, fmt.Errorf("fsblob: %s: %w", key, err)
	}
	return f, info, nil
}

func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(b.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("fsblob: %w", err)
	}
	return nil
}

// PresignGet is not supported: there is no server to hand a URL to.
func (b *Bucket) PresignGet(context.Context, string, time.Duration) (string, error) {
	return "", blob.ErrNotSupported
}
