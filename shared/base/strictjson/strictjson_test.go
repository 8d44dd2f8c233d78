package strictjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"platformapi/shared/base/strictjson"
)

// A document that encoding/json would read differently
// from a key-sensitive reader is refused, with the path of the later key.
func TestDuplicateAndCaseVariantKeysAreRefusedAtAnyDepth(t *testing.T) {
	for _, tc := range []struct {
		name, doc, path, key, earlier string
	}{
		{"case variant selects another record", `{"MemoryId":"B","memoryId":"A"}`, "memoryId", "memoryId", "MemoryId"},
		{"exact duplicate", `{"a":1,"a":2}`, "a", "a", "a"},
		{"escaped duplicate", `{"memoryId":"A","memory\u0049d":"B"}`, "memoryId", "memoryId", "memoryId"},
		{"Kelvin sign folds to k", `{"key":1,"\u212aey":2}`, "[\"\u212aey\"]", "\u212aey", "key"},
		{"nested object", `{"a":{"x":1,"y":{"Z":1,"z":2}}}`, "a.y.z", "z", "Z"},
		{"inside an array", `[{"a":1},{"b":1,"B":2}]`, "[1].B", "B", "b"},
		{"array in object", `{"items":[1,{"n":1},{"n":1,"N":1}]}`, "items[2].N", "N", "n"},
		{"odd key is quoted", `{"a b":{"c":1,"C":1}}`, `["a b"].C`, "C", "c"},
		{"after a nested object closes", `{"a":{"b":1},"c":[{}],"A":0}`, "A", "A", "a"},
		{"invalid UTF-8 decodes alike", "{\"a\xff\":1,\"a\xfe\":2}", "[\"a\ufffd\"]", "a\ufffd", "a\ufffd"},
		{"many keys, then a duplicate", manyKeys(100) + `,"K50":1}`, "K50", "K50", "k50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := strictjson.Check([]byte(tc.doc))
			var ke *strictjson.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Check = %v, want a KeyError", err)
			}
			if ke.Path != tc.path || ke.Key != tc.key || ke.Earlier != tc.earlier {
				t.Fatalf("KeyError = %+v, want path %q key %q earlier %q", ke, tc.path, tc.key, tc.earlier)
			}
			var v any
			if err := strictjson.Unmarshal([]byte(tc.doc), &v); !errors.As(err, &ke) {
				t.Fatalf("Unmarshal = %v, want a KeyError", err)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + itoa(i) + `":1`)
	}
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A case variant placed to swap the approved record: the record a struct
// decoder would pick (B) is never reached, in either key order.
func TestTheApprovedRecordCannotBeSwappedByACaseVariant(t *testing.T) {
	var in struct {
		MemoryID string `json:"memoryId"`
	}
	for _, doc := range []string{`{"MemoryId":"B","memoryId":"A"}`, `{"memoryId":"A","MemoryId":"B"}`} {
		err := strictjson.Decode([]byte(doc), &in, true)
		var ke *strictjson.KeyError
		if !errors.As(err, &ke) || ke.Location("body") != "body."+ke.Key {
			t.Fatalf("Decode(%s) = %v, want a KeyError at body.<key>", doc, err)
		}
	}
}

func TestDocumentsWithDistinctKeysDecode(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `"x"`, `1`, `null`, ` {"a":1,"b":{"a":2,"b":[{"a":3}]}} `,
		`{"a":{"x":1},"b":{"x":1}}`,        // equal keys in sibling objects
		`[{"a":1},{"a":1}]`,                // equal keys in array elements
		`{"s":"{\"a\":1,\"a\":2}","A_":1}`, // a duplicate inside a string value is data
		`{"ab":1,"a\\b":2,"aB_":3}`,
		manyKeys(200) + "}",
	} {
		var v any
		if err := strictjson.Unmarshal([]byte(doc), &v); err != nil {
			t.Errorf("Unmarshal(%.60s) = %v", doc, err)
		}
	}
}

func TestInvalidJSONIsASyntaxError(t *testing.T) {
	for _, doc := range []string{``, `{`, `{"a":1}{"b":2}`, `{"a":1,}`, `{"a" 1}`, `[1,]`, "\"\xff", `{'a':1}`} {
		var se *json.SyntaxError
		if err := strictjson.Check([]byte(doc)); !errors.As(err, &se) {
			t.Errorf("Check(%q) = %v, want a *json.SyntaxError", doc, err)
		}
	}
}

// Unknown fields are the caller's choice.
func TestUnknownFieldsAreRefusedOnlyWhenAsked(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	if err := strictjson.Decode([]byte(`{"a":1,"b":2}`), &v, false); err != nil || v.A != 1 {
		t.Fatalf("lenient decode: %v, %+v", err, v)
	}
	if err := strictjson.Decode([]byte(`{"a":1,"b":2}`), &v, true); err == nil || !strings.Contains(err.Error(), `unknown field "b"`) {
		t.Fatalf("strict decode: %v", err)
	}
	var te *json.UnmarshalTypeError
	if err := strictjson.Unmarshal([]byte(`{"a":"x"}`), &v); !errors.As(err, &te) {
		t.Fatalf("type mismatch: %v", err)
	}
}
