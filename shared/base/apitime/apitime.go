// Package apitime is how the API writes times: RFC 3339 in UTC with exactly
// three fractional digits (2026-11-26T07:25:47.960Z).
// The fixed width is what makes times sort as strings: encoding/json writes
// RFC 3339 with nanoseconds and trims trailing zeros, so 47.96Z and 47.961Z
// would appear side by side and sort wrongly.
//
// Times stay time.Time everywhere else; only the encoders that produce what
// a client reads (the kernel's JSON format, webhook payloads, MCP results)
// use Marshal, so no struct needs a special type and no stored item changes.
package apitime

import (
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"sync"
	"time"
)

// Layout is the one time format of the API.
const Layout = "2006-01-02T15:04:05.000Z"

// Format writes t as the API does: UTC, milliseconds (truncated), Z.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Marshal is encoding/json's Marshal without HTML escaping (huma's default
// format) except that every time.Time, also behind a pointer or in an
// interface, is written by Format.
//
// encoding/json cannot be told how to write a type it does not own, so
// Marshal walks only the parts of a value whose type can hold a time
// (holdsTime) and hands every other part to encoding/json whole: the bytes
// of anything that is not a time are encoding/json's own. A walker of our
// own, rather than a JSON library that takes per-type marshalers, because
// such a library costs every function half a megabyte of its bootstrap.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeAny(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Encode writes v and a newline, as json.Encoder.Encode does: the
// kernel's response format. It encodes into a pooled buffer, which w must
// not keep (io.Writer's rule): a response then allocates no buffer of its
// own.
func Encode(w io.Writer, v any) error {
	b := buffers.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= maxPooled {
			b.Reset()
			buffers.Put(b)
		}
	}()
	if err := encodeAny(b, v); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooled keeps a rare large response's buffer out of the pool.
const maxPooled = 64 << 10

// encodeAny is encode of v; a value whose type holds no time goes to
// encoding/json as it is, not through reflect.Value.Interface's copy.
func encodeAny(b *bytes.Buffer, v any) error {
	if v != nil && !holdsTime(reflect.TypeOf(v)) {
		return stdAny(b, v)
	}
	return encode(b, reflect.ValueOf(v))
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

func encode(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	t := v.Type()
	if t == timeType {
		at, _ := reflect.TypeAssert[time.Time](v)
		b.WriteByte('"')
		b.Write(at.UTC().AppendFormat(b.AvailableBuffer(), Layout))
		b.WriteByte('"')
		return nil
	}
	if !holdsTime(t) {
		if plain(t) && appendPlain(b, v) {
			return nil
		}
		return std(b, v)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encode(b, v.Elem())
	case reflect.Struct:
		return encodeStruct(b, v)
	case reflect.Map:
		return encodeMap(b, v)
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
	}
	// An array or a slice.
	b.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(b, v.Index(i)); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// plains caches plain per type.
var plains sync.Map // reflect.Type → bool

// plain tells a string, bool or integer type without methods of its own
// for encoding/json: one whose bytes appendPlain can write as encoding/json
// would, beside a time in the same struct, without an encoder per field.
func plain(t reflect.Type) bool {
	if p, ok := plains.Load(t); ok {
		return p.(bool)
	}
	p := false
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// json.Number is a string encoding/json writes as a number.
		pt := reflect.PointerTo(t)
		p = t != numberType && !t.Implements(marshalerType) && !pt.Implements(marshalerType) &&
			!t.Implements(textMarshalerType) && !pt.Implements(textMarshalerType)
	}
	plains.Store(t, p)
	return p
}

// appendPlain writes a value of a plain type as encoding/json does, and
// reports false, writing nothing, for a string that needs escaping (left
// to encoding/json).
func appendPlain(b *bytes.Buffer, v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
	case reflect.Bool:
		b.Write(strconv.AppendBool(b.AvailableBuffer(), v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), v.Int(), 10))
	default:
		b.Write(strconv.AppendUint(b.AvailableBuffer(), v.Uint(), 10))
	}
	return true
}

// std appends v as encoding/json writes it, without HTML escaping. An
// addressable value goes by its address, so that methods with pointer
// receivers apply as they would had encoding/json walked there itself.
func std(b *bytes.Buffer, v reflect.Value) error {
	var x any
	if v.CanAddr() {
		x = v.Addr().Interface()
	} else {
		x = v.Interface()
	}
	return stdAny(b, x)
}

// stdAny appends x as encoding/json writes it, without HTML escaping.
func stdAny(b *bytes.Buffer, x any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

func encodeStruct(b *bytes.Buffer, v reflect.Value) error {
	b.WriteByte('{')
	first := true
	for _, f := range fieldsOf(v.Type()) {
		fv, ok := fieldByIndex(v, f.index)
		if !ok || f.omitEmpty && isEmpty(fv) || f.omitZero && isZero(fv) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(f.key)
		if f.quoted && !(fv.Kind() == reflect.Pointer && fv.IsNil()) {
			// ",string": the value's JSON text, as a JSON string.
			var inner bytes.Buffer
			if err := std(&inner, fv); err != nil {
				return err
			}
			if err := std(b, reflect.ValueOf(inner.String())); err != nil {
				return err
			}
			continue
		}
		if err := encode(b, fv); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// fieldByIndex is the field at index, ok false when an embedded pointer on
// the way is nil (encoding/json leaves such fields out).
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func encodeMap(b *bytes.Buffer, v reflect.Value) error {
	if v.IsNil() {
		b.WriteString("null")
		return nil
	}
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k, err := mapKey(it.Key())
		if err != nil {
			return err
		}
		entries = append(entries, entry{k, it.Value()})
	}
	sortBy(entries, func(e entry) string { return e.key })
	b.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := std(b, reflect.ValueOf(e.key)); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encode(b, e.val); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}
