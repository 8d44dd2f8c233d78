package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"platformapi/shared/base/strictjson"
)

// reference is the slow, obviously right Check: a Decoder.Token walk that
// compares every key of an object with every earlier one by bytes.EqualFold,
// the equivalence encoding/json matches field names by.
func reference(data []byte) (valid, collision bool) {
	if !json.Valid(data) {
		return false, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func() bool
	walk = func() bool {
		tok, _ := dec.Token()
		switch tok {
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				k, _ := dec.Token()
				for _, prev := range keys {
					if bytes.EqualFold([]byte(prev), []byte(k.(string))) {
						return true
					}
				}
				keys = append(keys, k.(string))
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return true, walk()
}

// FuzzCheck: Check agrees with the reference on every input, never panics,
// and what it accepts decodes and stays accepted once re-encoded.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"MemoryId":"B","memoryId":"A"}`, `{"a":{"b":[1,{"c":2,"C":3}]}}`, `{"key":1,"\u212aey":2}`,
		`{"a\\u0062":1,"ab":2}`, `[{"a":1},{"a":1}]`, `{"s":"\"a\":1,\"a\":2"}`, `{}`, `1`, `{"a":1}{}`, "{\"a\xff\":1,\"a\xfe\":2}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := strictjson.Check(data)
		valid, collision := reference(data)
		var ke *strictjson.KeyError
		var se *json.SyntaxError
		switch {
		case !valid:
			if !errors.As(err, &se) {
				t.Fatalf("invalid JSON %q: Check = %v", data, err)
			}
			return
		case collision:
			if !errors.As(err, &ke) {
				t.Fatalf("%q has colliding keys: Check = %v", data, err)
			}
			if !bytes.EqualFold([]byte(ke.Key), []byte(ke.Earlier)) {
				t.Fatalf("KeyError %+v names keys that do not collide", ke)
			}
			return
		case err != nil:
			t.Fatalf("%q is valid without collisions: Check = %v", data, err)
		}
		var v any
		var te *json.UnmarshalTypeError
		if err := strictjson.Unmarshal(data, &v); errors.As(err, &te) {
			return // a number beyond float64: valid JSON that does not fit any
		} else if err != nil {
			t.Fatalf("accepted %q but Unmarshal = %v", data, err)
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := strictjson.Check(again); err != nil {
			t.Fatalf("re-encoded %q is refused: %v", again, err)
		}
	})
}
