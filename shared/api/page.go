package api

import (
	"strconv"

	"platformapi/shared/base/apierr"
)

// Page is every list response: a page of data and the cursor of the next
// page, null on the last.
type Page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// NewPage is a page of data; next is "" on the last page.
func NewPage[T any](data []T, next string) Page[T] {
	if data == nil {
		data = []T{}
	}
	p := Page[T]{Data: data}
	if next != "" {
		p.NextCursor = &next
	}
	return p
}

// ListInput is the paging of every list endpoint. It is
// exported because huma reads the fields of embedded structs only when the
// embedded type is exported.
type ListInput struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
}

// Body is an operation's input or output that is only a JSON body.
type Body[T any] struct{ Body T }

// Reply wraps v as a JSON response body.
func Reply[T any](v T) *Body[T] { return &Body[T]{Body: v} }

// PageOf pages a computed list by position; the cursor is the last position.
func PageOf[T any](all []T, in *ListInput) (Page[T], error) {
	start := 0
	if in.Cursor != "" {
		n, err := strconv.Atoi(in.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return Page[T]{}, apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
		}
		start = n
	}
	end := min(len(all), start+in.Limit)
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return NewPage(all[start:end], next), nil
}
