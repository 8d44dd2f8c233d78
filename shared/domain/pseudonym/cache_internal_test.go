package pseudonym

import (
	"strconv"
	"testing"
)

// The cache of opened secrets is bounded and evicts the least recently
// used account first.
func TestTheSecretCacheIsBoundedAndEvictsTheLeastRecentlyUsed(t *testing.T) {
	k := New(nil, nil)
	for i := range CacheSize {
		k.remember("acct-"+strconv.Itoa(i), []byte{byte(i)})
	}
	k.cached("acct-0") // used again: now the most recent
	k.remember("acct-new", []byte{1})
	if k.order.Len() != CacheSize || len(k.byAcc) != CacheSize {
		t.Fatalf("cache holds %d (%d indexed), want %d", k.order.Len(), len(k.byAcc), CacheSize)
	}
	if k.cached("acct-0") == nil || k.cached("acct-new") == nil {
		t.Fatal("a recently used secret was evicted")
	}
	if k.cached("acct-1") != nil {
		t.Fatal("the least recently used secret was kept")
	}
}
