package fsblob

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"platformapi/shared/adapters/blob"
)

// List reads the header of every object file, since file names are hashes
// of keys and say nothing about the prefix. The entries (not the bodies) are
// gathered and sorted before the first is yielded: an embedded bucket is
// small enough for that, and the port promises key order.
func (b *Bucket) List(ctx context.Context, prefix string) iter.Seq2[blob.Entry, error] {
	return func(yield func(blob.Entry, error) bool) {
		entries, err := b.entries(ctx, prefix)
		if err != nil {
			yield(blob.Entry{}, err)
			return
		}
		for _, e := range entries {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (b *Bucket) entries(ctx context.Context, prefix string) ([]blob.Entry, error) {
	var out []blob.Entry
	err := filepath.WalkDir(b.objects, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			return nil // deleted while we walked
		}
		if err != nil {
			return err
		}
		info, err := readHeader(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if strings.HasPrefix(info.Key, prefix) {
			out = append(out, blob.Entry{Key: info.Key, Size: info.Size, Modified: info.Modified})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fsblob: list: %w", err)
	}
	slices.SortFunc(out, func(a, b blob.Entry) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}
