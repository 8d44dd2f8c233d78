// Package paging turns a list's position (the sort key of its last item)
// into the opaque cursor clients send back, and reads it again; a cursor
// that is not one of ours is a validation error, never a storage query.
package paging

import (
	"context"
	"encoding/base64"
	"fmt"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
)

// Cursor is the opaque cursor of a position.
func Cursor(position string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(position))
}

// After reads a cursor back into its position; "" stays "".
func After(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
	}
	return string(b), nil
}

// List reads one page of the items of partition pk under prefix, whose
// sort keys are prefix+id; the cursor is the last item's id. Items are in
// sort-key order, or newest first.
func List[T any](ctx context.Context, st store.Store, pk, prefix string, newestFirst bool, limit int, cursor string,
	decode func(store.Item) (T, string, error)) ([]T, string, error) {
	after, err := After(cursor)
	if err != nil {
		return nil, "", err
	}
	q := store.Query{PK: pk, Prefix: prefix, Limit: limit, Reverse: newestFirst}
	if after != "" {
		q.After = prefix + after
	}
	pg, err := st.Query(ctx, q)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", prefix, err)
	}
	out := make([]T, 0, len(pg.Items))
	last := ""
	for _, it := range pg.Items {
		v, id, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		out, last = append(out, v), id
	}
	if pg.More && last != "" {
		return out, Cursor(last), nil
	}
	return out, "", nil
}
