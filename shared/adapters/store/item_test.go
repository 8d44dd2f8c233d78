package store

import "testing"

func TestChangingAClonedItemChangesNotTheOriginal(t *testing.T) {
	orig := Item{"s": "a", "n": int64(1), "b": []byte("xy")}
	c := orig.Clone()
	c["s"], c["n"] = "b", int64(2)
	c.Bytes("b")[0] = 'z'
	if orig.String("s") != "a" || orig.Int("n") != 1 || string(orig.Bytes("b")) != "xy" {
		t.Fatalf("the original changed with its clone: %v", orig)
	}
}

// A document that does not encode stops the write instead of storing an
// empty document over the record.
func TestADocumentThatDoesNotEncodeIsNeverStoredEmpty(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("DocOf returned for a value JSON cannot encode")
		}
	}()
	DocOf(map[string]any{"f": func() {}})
}
