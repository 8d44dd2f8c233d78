package superbrain

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/strictjson"
)

// Input bounds. The schemas (schemas.go) are built from the same constants.
const (
	maxTextChars      = 8000
	maxMetadataPairs  = 20
	maxMetaKeyChars   = 40
	maxMetaValueChars = 500
	maxQueryChars     = 500
	defaultSearchHits = 10
	maxSearchHits     = 50
	defaultListLimit  = 20
	maxListLimit      = 100
)

type writeInput struct {
	Text     string            `json:"text"`
	Metadata map[string]string `json:"metadata"`
}

type searchInput struct {
	Query string `json:"query"`
	Limit *int   `json:"limit"`
}

type listInput struct {
	Limit  *int   `json:"limit"`
	Cursor string `json:"cursor"`
}

type deleteInput struct {
	MemoryID string `json:"memoryId"`
}

// decodeInput reads an operation's input strictly: one JSON object, no
// unknown fields, no trailing data, and no duplicate or case-variant keys
// (strictjson): the input an approval was bound to must be the input read
// here, and {"MemoryId":"B","memoryId":"A"} would read as B while its
// canonical form also holds A. An absent or null input is an empty object,
// so operations whose fields are all optional need none.
func decodeInput(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return apierr.Invalid("The input must be a JSON object.", apierr.Field("input", "must be a JSON object"))
	}
	var ke *strictjson.KeyError
	if err := strictjson.Decode(raw, v, true); errors.As(err, &ke) {
		return apierr.Invalid("The input has ambiguous keys.", apierr.Field(ke.Location("input"), "%s", ke.Message()))
	} else if err != nil {
		return inputError(err, v)
	}
	return nil
}

// inputError turns a decoding failure into a field error.
func inputError(err error, v any) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		msg := "must be " + kind(te.Type)
		if isMapValue(v, te) {
			msg = "values must be " + kind(te.Type)
		}
		return apierr.Invalid("The input is invalid.", apierr.Field("input."+te.Field, "%s", msg))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return apierr.Invalid("The input is invalid.", apierr.Field("input."+strings.Trim(name, `"`), "is not a field of this operation"))
	}
	return apierr.Invalid("The input is not valid JSON.", apierr.Field("input", "is not valid JSON"))
}

// isMapValue reports whether the type error is about a value inside a map
// field: the decoder then names the map, not the key, and the type it
// reports is the value's.
func isMapValue(v any, te *json.UnmarshalTypeError) bool {
	for f := range reflect.TypeOf(v).Elem().Fields() {
		if strings.Split(f.Tag.Get("json"), ",")[0] == te.Field {
			return f.Type.Kind() == reflect.Map && f.Type != te.Type
		}
	}
	return false
}

func kind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "an integer"
	case reflect.Map:
		return "an object of strings"
	}
	return "of type " + t.String()
}

// fieldErrors collects every problem of an input, so a client fixes them
// all in one round.
type fieldErrors []apierr.FieldError

func (fe *fieldErrors) add(location, msg string, args ...any) {
	*fe = append(*fe, apierr.Field(location, msg, args...))
}

func (fe fieldErrors) err() error {
	if len(fe) == 0 {
		return nil
	}
	return apierr.Invalid("The input is invalid.", fe...)
}

// text checks a required string of 1..maxChars characters (code points)
// that is not only white space.
func (fe *fieldErrors) text(location, s string, maxChars int) {
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		fe.add(location, "is required")
	case n > maxChars:
		fe.add(location, "must be at most %d characters, got %d", maxChars, n)
	case strings.TrimSpace(s) == "":
		fe.add(location, "must not be only white space")
	}
}

// limit checks an optional integer in 1..maxValue and returns it or def.
func (fe *fieldErrors) limit(location string, v *int, def, maxValue int) int {
	if v == nil {
		return def
	}
	if *v < 1 || *v > maxValue {
		fe.add(location, "must be between 1 and %d, got %d", maxValue, *v)
	}
	return *v
}

func (in writeInput) validate() error {
	var fe fieldErrors
	fe.text("input.text", in.Text, maxTextChars)
	if len(in.Metadata) > maxMetadataPairs {
		fe.add("input.metadata", "must have at most %d pairs, got %d", maxMetadataPairs, len(in.Metadata))
	}
	for _, k := range slices.Sorted(maps.Keys(in.Metadata)) {
		v := in.Metadata[k]
		loc := "input.metadata." + clip(k, maxMetaKeyChars)
		if n := utf8.RuneCountInString(k); n == 0 || n > maxMetaKeyChars {
			fe.add(loc, "keys must be 1 to %d characters", maxMetaKeyChars)
		}
		if n := utf8.RuneCountInString(v); n > maxMetaValueChars {
			fe.add(loc, "values must be at most %d characters, got %d", maxMetaValueChars, n)
		}
	}
	return fe.err()
}

// clip shortens a client's string before it is echoed in an error.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
