package approvals_test

import (
	"encoding/json"
	"errors"
	"testing"

	"platformapi/shared/base/strictjson"
	"platformapi/shared/groups/approvals"
)

func TestCanonicalFormIgnoresKeyOrderAndWhitespace(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{` {"b":1, "a":{"d":[1,2],"c":null}} `, `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{`{"n":1.50,"big":123456789012345678901234567890}`, `{"big":123456789012345678901234567890,"n":1.50}`},
		{`{"s":"\u00e9<"}`, `{"s":"é\u003c"}`},
	} {
		got, sum, err := approvals.Canonical(json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want || len(sum) != 64 {
			t.Errorf("Canonical(%s) = %s, %s, %v; want %s", tc.in, got, sum, err, tc.want)
		}
	}
}

// An input that two readers could read differently has
// no canonical form, so no approval can be requested for it nor consumed by
// it.
func TestAnInputWithAmbiguousKeysHasNoCanonicalForm(t *testing.T) {
	for _, tc := range []struct{ in, path string }{
		{`{"MemoryId":"B","memoryId":"A"}`, "memoryId"},
		{`{"memoryId":"A","MemoryId":"B"}`, "MemoryId"},
		{`{"memoryId":"A","memoryId":"B"}`, "memoryId"},
		{`{"x":{"y":1,"Y":2}}`, "x.Y"},
	} {
		_, _, err := approvals.Canonical(json.RawMessage(tc.in))
		var ke *strictjson.KeyError
		if !errors.As(err, &ke) || ke.Path != tc.path {
			t.Errorf("Canonical(%s) = %v, want a key error at %s", tc.in, err, tc.path)
		}
	}
}

// A second value after the input would be ignored by a streaming decoder
// and seen by another reader: it is refused, not dropped.
func TestAnInputWithTrailingDataHasNoCanonicalForm(t *testing.T) {
	for _, in := range []string{`{"a":1} {"a":2}`, `{"a":1}]`, `{"a":1`} {
		if out, _, err := approvals.Canonical(json.RawMessage(in)); err == nil {
			t.Errorf("Canonical(%s) = %s, want an error", in, out)
		}
	}
}

// FuzzCanonical: canonicalisation never panics, is idempotent, and its
// output is itself strict JSON.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `{"MemoryId":"B","memoryId":"A"}`, `{"a":1} {}`, `1e400`, `{"\u212aey":1}`, `"<&>"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		canon, sum, err := approvals.Canonical(in)
		if err != nil {
			return
		}
		if err := strictjson.Check(canon); err != nil {
			t.Fatalf("canonical form %s of %q is not strict: %v", canon, in, err)
		}
		again, sum2, err := approvals.Canonical(canon)
		if err != nil || string(again) != string(canon) || sum2 != sum {
			t.Fatalf("not idempotent: %q -> %s -> %s (%v)", in, canon, again, err)
		}
	})
}
