// Package strictjson decodes JSON that means one thing only: an object may
// not hold the same key twice, nor two keys that differ only in case.
// encoding/json matches struct fields case-insensitively and lets the last
// duplicate win, so {"MemoryId":"B","memoryId":"A"} reads as B while a
// canonical form or another reader may take A: an approval or a signature
// over one reading would then authorise the other.
// Refusing such documents makes every reader agree.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// KeyError is a duplicate or case-variant key.
type KeyError struct {
	// Path locates the later key from the document's root: "memoryId",
	// "items[2].name", `meta["a b"]`. Callers put their own root before
	// it, see Location.
	Path string
	// Key is the later key, Earlier the one of the same object it collides
	// with (equal for an exact duplicate).
	Key, Earlier string
}

func (e *KeyError) Error() string {
	return "strictjson: " + e.Path + ": " + e.Message()
}

// Message describes the collision without the path, for a field error.
func (e *KeyError) Message() string {
	if e.Key == e.Earlier {
		return fmt.Sprintf("duplicate key %q", e.Key)
	}
	return fmt.Sprintf("key %q differs only in case from key %q of the same object", e.Key, e.Earlier)
}

// Location is the key's path under root, e.g. Location("body") is
// "body.memoryId".
func (e *KeyError) Location(root string) string {
	if e.Path == "" || e.Path[0] == '[' {
		return root + e.Path
	}
	return root + "." + e.Path
}

// Unmarshal is Decode without DisallowUnknownFields.
func Unmarshal(data []byte, v any) error { return Decode(data, v, false) }

// Decode checks data (see Check) and then decodes it into v as
// json.Unmarshal does, refusing fields v does not have when
// disallowUnknown is set. Errors are *KeyError, *json.SyntaxError or what
// encoding/json returns for a value that does not fit v.
func Decode(data []byte, v any, disallowUnknown bool) error {
	if err := Check(data); err != nil {
		return err
	}
	if !disallowUnknown {
		return json.Unmarshal(data, v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v) // Check proved data is exactly one value
}

// Check reports whether data is exactly one valid JSON value whose objects,
// at any depth, have no duplicate keys and no two keys equal under the
// case folding encoding/json uses to match fields (which folds Unicode too:
// the Kelvin sign K matches k).
func Check(data []byte) error {
	if !json.Valid(data) {
		// Only for the error and its offset: json.Valid says nothing else.
		return json.Unmarshal(data, new(json.RawMessage))
	}
	s := scanner{data: data}
	return s.run()
}

// frame is one open object or array.
type frame struct {
	object bool
	index  int               // arrays: the current element
	key    string            // objects: the current key, as decoded
	keys   []string          // objects: folded keys seen, while few
	set    map[string]string // objects: folded key to key, once many
	names  []string          // objects: keys seen, parallel to keys
}

// smallObject is how many keys an object keeps in a slice before it moves
// them to a map: most objects are small, and a short scan beats hashing.
const smallObject = 16

// scanner walks data, which json.Valid has accepted, once.
type scanner struct {
	data  []byte
	stack []frame
}

func (s *scanner) run() error {
	d := s.data
	expectKey := false
	for i := 0; i < len(d); i++ {
		switch c := d[i]; c {
		case '{':
			s.push(true)
			expectKey = true
		case '[':
			s.push(false)
		case '}', ']':
			s.stack = s.stack[:len(s.stack)-1]
		case ',':
			top := &s.stack[len(s.stack)-1]
			if top.object {
				expectKey = true
			} else {
				top.index++
			}
		case '"':
			end := stringEnd(d, i)
			if expectKey {
				expectKey = false
				if err := s.key(d[i : end+1]); err != nil {
					return err
				}
			}
			i = end
		}
	}
	return nil
}

func (s *scanner) push(object bool) {
	if len(s.stack) < cap(s.stack) {
		s.stack = s.stack[:len(s.stack)+1]
		f := &s.stack[len(s.stack)-1]
		*f = frame{object: object, keys: f.keys[:0], names: f.names[:0]}
		return
	}
	s.stack = append(s.stack, frame{object: object})
}

// stringEnd is the index of the quote closing the string opening at i.
func stringEnd(d []byte, i int) int {
	for j := i + 1; ; j++ {
		switch d[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
}

// key records one key of the innermost object.
func (s *scanner) key(quoted []byte) error {
	name := decodeKey(quoted)
	folded := fold(name)
	top := &s.stack[len(s.stack)-1]
	top.key = name
	earlier, seen := "", false
	if top.set != nil {
		earlier, seen = top.set[folded]
	} else {
		for i, k := range top.keys {
			if k == folded {
				earlier, seen = top.names[i], true
				break
			}
		}
	}
	if seen {
		return &KeyError{Path: s.path(), Key: name, Earlier: earlier}
	}
	if top.set == nil && len(top.keys) < smallObject {
		top.keys = append(top.keys, folded)
		top.names = append(top.names, name)
		return nil
	}
	if top.set == nil {
		top.set = make(map[string]string, 2*smallObject)
		for i, k := range top.keys {
			top.set[k] = top.names[i]
		}
	}
	top.set[folded] = name
	return nil
}

// decodeKey is the key as encoding/json reads it: escapes resolved and
// invalid UTF-8 replaced, so keys collide here exactly when they collide
// there.
func decodeKey(quoted []byte) string {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw)
	}
	var out string
	_ = json.Unmarshal(quoted, &out) // valid: json.Valid accepted the document
	return out
}

// fold maps s to a form equal for exactly the names encoding/json matches
// to one another (its foldName: ASCII upper case, and each other rune to
// the smallest rune of its Unicode simple-folding orbit).
func fold(s string) string {
	unchanged := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'a' <= c && c <= 'z' {
			unchanged = false
			break
		}
	}
	if unchanged {
		return s
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = append(out, byte(r))
		default:
			out = utf8.AppendRune(out, foldRune(r))
		}
	}
	return string(out)
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// path renders the position of the innermost object's current key.
func (s *scanner) path() string {
	var b []byte
	for _, f := range s.stack {
		if !f.object {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
			continue
		}
		if plain(f.key) {
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
			continue
		}
		b = append(b, '[')
		b = strconv.AppendQuote(b, f.key)
		b = append(b, ']')
	}
	return string(b)
}

// plain reports whether a key can be written after a dot.
func plain(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}
