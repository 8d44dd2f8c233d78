// Package paging turns a list's position (the sort key of its last item)
// into the opaque cursor clients send back, and reads it again; a cursor
// that is not one of ours is a validation error, never a storage query.
package paging

import (
	"encoding/base64"

	"platformapi/shared/apierr"
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
