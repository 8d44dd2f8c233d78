package keys

import (
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/limits"
)

// decodeFixture is a stored child key with explicit boundaries and a limit,
// about the size of the records authentication reads.
func decodeFixture(t testing.TB) store.Item {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	none := func(string) bool { return false }
	n := int64(100)
	root, err := Build(nil, "acct_01JBENCH0000000000000000000", CreateKeyRequest{}, now, none)
	if err != nil {
		t.Fatal(err)
	}
	root.ID = "key_01JBENCHROOT00000000000000"
	child, err := Build([]*Key{root}, root.AccountID, CreateKeyRequest{
		Label: "bench child", ExcludedServices: []string{"managed-trading"},
		Limits: limits.Set{"*": {RequestsPerMinute: &n}},
	}, now, none)
	if err != nil {
		t.Fatal(err)
	}
	_, child.SecretHash = NewSecret(child)
	return encode(child)
}

// A revocation is an attribute of its own, read on every decode: a cached
// document never hides it, and a changed document is a new entry.
func TestADecodedKeyShowsItsRevocationAtOnce(t *testing.T) {
	it := decodeFixture(t)
	first, err := decode(it)
	if err != nil || first.RevokedAt != nil {
		t.Fatalf("decode = %+v, %v", first, err)
	}
	revokedAt := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	it[attrRevokedAt] = revokedAt.UnixMilli()
	again, err := decode(it)
	if err != nil || again.RevokedAt == nil || !again.RevokedAt.Equal(revokedAt) {
		t.Fatalf("after revocation: %+v, %v", again, err)
	}
	if first.RevokedAt != nil {
		t.Fatal("decoding the revoked record changed a key decoded before")
	}
	changed := *first
	changed.Label = "relabelled"
	relabelled, err := decode(encode(&changed))
	if err != nil || relabelled.Label != "relabelled" {
		t.Fatalf("a changed document decoded as %q, %v", relabelled.Label, err)
	}
}

// The cache stays within its bound however many distinct records it sees.
func TestTheDecodeCacheIsBounded(t *testing.T) {
	c := docCache{max: 3, m: map[string]*Key{}}
	for _, doc := range []string{"a", "b", "c", "d", "e"} {
		c.put([]byte(doc), &Key{ID: doc})
		if len(c.m) > 3 {
			t.Fatalf("%d entries, bound 3", len(c.m))
		}
	}
	if c.get([]byte("e")) == nil {
		t.Fatal("the newest entry is missing")
	}
}

// BenchmarkDecode: a key record as authentication reads it three times per
// request, seen before (the cache) and for the first time (JSON).
func BenchmarkDecode(b *testing.B) {
	it := decodeFixture(b)
	b.Run("Cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decode(it); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FirstSight", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decoded.mu.Lock()
			clear(decoded.m)
			decoded.mu.Unlock()
			if _, err := decode(it); err != nil {
				b.Fatal(err)
			}
		}
	})
}
