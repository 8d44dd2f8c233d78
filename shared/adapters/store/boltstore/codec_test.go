package boltstore

import (
	"math"
	"reflect"
	"testing"

	"platformapi/shared/adapters/store"
)

// decodeItem reads its own varints over one copied string: every value
// kind, the extremes of int64 and empty strings must come back as written,
// and no truncation of a valid encoding may decode or panic.
func TestTheCodecRoundTripsEveryValueAndRefusesEveryTruncation(t *testing.T) {
	it := store.Item{
		"pk": "acct#a", "sk": "", "doc": []byte(`{"id":"key_x"}`), "empty": []byte{},
		"min": int64(math.MinInt64), "max": int64(math.MaxInt64), "neg": int64(-300), "zero": int64(0),
		"yes": true, "no": false, "text": "ünïcode",
	}
	raw := encodeItem(it)
	got, err := decodeItem(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, it) {
		t.Fatalf("decoded %v, want %v", got, it)
	}
	for n := range len(raw) {
		if got, err := decodeItem(raw[:n]); err == nil && reflect.DeepEqual(got, it) {
			t.Fatalf("a truncation to %d bytes decoded as the whole item", n)
		}
	}
}

// BenchmarkDecodeItem: an item shaped like a key record (a JSON document
// and a few strings and numbers), as authentication reads four per request.
func BenchmarkDecodeItem(b *testing.B) {
	raw := encodeItem(store.Item{
		"pk": "key#key_01JBENCH00000000000000000", "sk": "key", "doc": make([]byte, 600),
		"createdAt": int64(1767323045000), "expiresAt": int64(1767409445), "status": "active",
	})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeItem(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeItem: an item shaped like an audit event (a 450-byte
// document, keys and an expiry), as the audit flusher writes one per
// request, with its key.
func BenchmarkEncodeItem(b *testing.B) {
	it := store.Item{
		"pk": "aud#acct_01JBENCH00000000000000000#20261126#3", "sk": "aud_01JBENCH00000000000000000",
		"doc": make([]byte, 450), "expiresAt": int64(1767409445),
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = encodeKey(it.Key())
		_ = encodeItem(it)
	}
}
