package storetest

import (
	"context"
	"errors"
	"testing"

	"platformapi/shared/adapters/store"
)

var valueRules = []rule{
	{"GetOfAbsentItemReturnsNotFound", func(t *testing.T, s store.Store) {
		wantNotFound(t, s, key("absent"))
	}},
	{"PutThenGetRoundTripsEveryValueType", func(t *testing.T, s store.Store) {
		it := item(key("a"),
			"s", "text", "empty", "", "n", int64(-42), "big", int64(1)<<62,
			"t", true, "f", false, "b", []byte{0, 1, 0xff}, "expiresAt", future())
		mustPut(t, s, it)
		wantAttrs(t, mustGet(t, s, it.Key()), it)
	}},
	{"PutRejectsUnsupportedValueTypes", func(t *testing.T, s store.Store) {
		for _, v := range []any{42, 1.5, []string{"x"}, map[string]any{}, nil} {
			wantInvalid(t, s.Put(ctx(t), item(key("a"), "v", v)))
		}
		wantInvalid(t, s.Put(ctx(t), item(key("a"), "expiresAt", "soon")))
		wantNotFound(t, s, key("a"))
	}},
	{"PutRejectsEmptyKeys", func(t *testing.T, s store.Store) {
		wantInvalid(t, s.Put(ctx(t), store.NewItem(store.Key{PK: "p", SK: ""})))
		wantInvalid(t, s.Put(ctx(t), store.NewItem(store.Key{PK: "", SK: "s"})))
	}},
	{"PutReplacesTheWholeItem", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "old", "x", "n", int64(1)))
		mustPut(t, s, item(key("a"), "n", int64(2)))
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "n", int64(2)))
	}},
	{"GetReturnsACopyTheCallerMayChange", func(t *testing.T, s store.Store) {
		mustPut(t, s, item(key("a"), "b", []byte("abc")))
		got := mustGet(t, s, key("a"))
		got["b"].([]byte)[0] = 'X'
		got["extra"] = "y"
		wantAttrs(t, mustGet(t, s, key("a")), item(key("a"), "b", []byte("abc")))
	}},
	{"BatchGetReturnsPresentItemsByKeyString", func(t *testing.T, s store.Store) {
		var keys []store.Key
		for i := range 100 {
			k := key(string(rune('a'+i%26)) + string(rune('a'+i/26)))
			keys = append(keys, k)
			if i%3 == 0 {
				mustPut(t, s, item(k, "i", int64(i)))
			}
		}
		mustPut(t, s, item(keys[1], "expiresAt", past()))
		got, err := s.BatchGet(ctx(t), keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 34 {
			t.Fatalf("got %d items; want 34", len(got))
		}
		for i, k := range keys {
			it, ok := got[k.String()]
			if ok != (i%3 == 0) {
				t.Fatalf("key %s present=%v; want %v", k, ok, i%3 == 0)
			}
			if ok && it.Int("i") != int64(i) {
				t.Fatalf("key %s = %v", k, it)
			}
		}
	}},
	{"BatchGetOfNoKeysIsEmpty", func(t *testing.T, s store.Store) {
		got, err := s.BatchGet(ctx(t), nil)
		if err != nil || len(got) != 0 {
			t.Fatalf("BatchGet(nil) = %v, %v", got, err)
		}
	}},
	{"OperationsHonourACancelledContext", func(t *testing.T, s store.Store) {
		c, cancel := context.WithCancel(ctx(t))
		cancel()
		if err := s.Put(c, item(key("a"))); !errors.Is(err, context.Canceled) {
			t.Fatalf("put with cancelled context = %v", err)
		}
		wantNotFound(t, s, key("a"))
	}},
}
