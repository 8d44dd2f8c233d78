package apitime

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// holds caches holdsTime per type.
var holds sync.Map // reflect.Type → bool

// holdsTime tells whether a value of t can hold a time.Time that
// encoding/json would write itself: in a field, an element, behind a
// pointer or an interface (any interface may). A type with its own
// MarshalJSON or MarshalText writes itself, times included, as it does
// under encoding/json.
func holdsTime(t reflect.Type) bool {
	if h, ok := holds.Load(t); ok {
		return h.(bool)
	}
	return holdsTimeWalking(t, map[reflect.Type]bool{})
}

// holdsTimeWalking is holdsTime while working out the types in walking.
// A recursive type meets itself again: walking it is always right, so this
// walk assumes it holds a time. The assumption stays in this walk's map:
// in the shared cache, another encoder would read it for a string or an
// integer, which it would then write as an array.
func holdsTimeWalking(t reflect.Type, walking map[reflect.Type]bool) bool {
	if h, ok := holds.Load(t); ok {
		return h.(bool)
	}
	if walking[t] {
		return true
	}
	walking[t] = true
	h := computeHoldsTime(t, walking)
	holds.Store(t, h)
	return h
}

func computeHoldsTime(t reflect.Type, walking map[reflect.Type]bool) bool {
	if t == timeType {
		return true
	}
	if t.Kind() == reflect.Pointer {
		// *time.Time has time.Time's methods: the element decides.
		return holdsTimeWalking(t.Elem(), walking)
	}
	pt := reflect.PointerTo(t)
	if t.Implements(marshalerType) || pt.Implements(marshalerType) || t.Implements(textMarshalerType) || pt.Implements(textMarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Slice, reflect.Array, reflect.Map:
		return holdsTimeWalking(t.Elem(), walking)
	case reflect.Struct:
		for _, f := range fieldsOf(t) {
			if holdsTimeWalking(t.FieldByIndex(f.index).Type, walking) {
				return true
			}
		}
	}
	return false
}

// field is a struct field as encoding/json writes it.
type field struct {
	name                        string
	key                         []byte // "name":
	index                       []int
	tagged                      bool
	omitEmpty, omitZero, quoted bool
}

var fieldCache sync.Map // reflect.Type → []field

// fieldsOf lists t's fields in encoding/json's order, with its rules:
// exported fields, json tags ("-", a name, omitempty, omitzero, string),
// embedded structs' fields promoted, and of fields sharing a name the
// shallowest (a tagged one first) unless that is ambiguous.
func fieldsOf(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	type level struct {
		t     reflect.Type
		index []int
	}
	var all []field
	visited := map[reflect.Type]bool{}
	for next := []level{{t, nil}}; len(next) > 0; {
		current := next
		next = nil
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous {
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				index := append(slices.Clone(l.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{ft, index})
					continue
				}
				f := field{name: name, index: index, tagged: name != ""}
				if name == "" {
					f.name = sf.Name
				}
				for o := range strings.SplitSeq(opts, ",") {
					switch o {
					case "omitempty":
						f.omitEmpty = true
					case "omitzero":
						f.omitZero = true
					case "string":
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							f.quoted = true
						}
					}
				}
				all = append(all, f)
			}
		}
	}
	slices.SortStableFunc(all, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := len(a.index) - len(b.index); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []field
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		group := all[i:j]
		if len(group) == 1 || len(group[0].index) < len(group[1].index) || group[0].tagged != group[1].tagged {
			out = append(out, group[0])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	for i := range out {
		var key bytes.Buffer
		_ = std(&key, reflect.ValueOf(out[i].name))
		out[i].key = append(key.Bytes(), ':')
	}
	fieldCache.Store(t, out)
	return out
}

// validName is encoding/json's rule for a tag's name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZero is encoding/json's omitzero test: the type's IsZero method, else
// the zero value.
func isZero(v reflect.Value) bool {
	type zeroer interface{ IsZero() bool }
	if z, ok := v.Interface().(zeroer); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	if v.CanAddr() {
		if z, ok := v.Addr().Interface().(zeroer); ok {
			return z.IsZero()
		}
	}
	return v.IsZero()
}

// mapKey is the object key encoding/json writes for a map key.
func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("apitime: unsupported map key type %s", k.Type())
}

func sortBy[E any](s []E, key func(E) string) {
	slices.SortFunc(s, func(a, b E) int { return strings.Compare(key(a), key(b)) })
}
