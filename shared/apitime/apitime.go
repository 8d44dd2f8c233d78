// Package apitime is how the API writes times: RFC 3339 in UTC with exactly
// three fractional digits (2026-11-26T07:25:47.960Z, CONTRACT.md "Times").
// The fixed width is what makes times sort as strings: encoding/json writes
// RFC 3339 with nanoseconds and trims trailing zeros, so 47.96Z and 47.961Z
// would appear side by side and sort wrongly.
//
// Times stay time.Time everywhere else; only the encoders that produce what
// a client reads (the kernel's JSON format, webhook payloads, MCP results)
// use Marshal, so no struct needs a special type and no stored item changes.
package apitime

import (
	stdjson "encoding/json"
	"io"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Layout is the one time format of the API.
const Layout = "2006-01-02T15:04:05.000Z"

// Format writes t as the API does: UTC, milliseconds (truncated), Z.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// options are encoding/json's semantics (field names, omitempty, nil
// slices as null, MarshalJSON methods, sorted map keys) without HTML
// escaping, as huma's default format, except that every time.Time, also
// behind a pointer or in an interface, is written by Format.
var options = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false),
	json.WithMarshalers(json.JoinMarshalers(
		json.MarshalToFunc(func(enc *jsontext.Encoder, t time.Time) error {
			return enc.WriteToken(jsontext.String(Format(t)))
		}),
		// encoding/json's Number is a plain string type to this package;
		// written as encoding/json writes it, a number ("" as 0).
		json.MarshalToFunc(func(enc *jsontext.Encoder, n stdjson.Number) error {
			if n == "" {
				n = "0"
			}
			return enc.WriteValue(jsontext.Value(n))
		}),
	)),
)

// Marshal is json.Marshal with the API's times.
func Marshal(v any) ([]byte, error) { return json.Marshal(v, options) }

// Encode writes v and a newline, as json.Encoder.Encode does: the
// kernel's response format.
func Encode(w io.Writer, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
