// Package storetest is the conformance suite of the item-store port, in the
// manner of gocloud.dev's drivertest: every adapter's tests call
// RunConformance, so the embedded and the DynamoDB adapter are held to one
// set of rules. It must never test an adapter's internals, only the port.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
)

// RunConformance runs every rule of the port against fresh stores made by
// newStore, which must register its own cleanup with t.Cleanup.
func RunConformance(t *testing.T, newStore func(t *testing.T) store.Store) {
	groups := []struct {
		name  string
		tests []rule
	}{
		{"Values", valueRules},
		{"Conditions", conditionRules},
		{"Update", updateRules},
		{"Delete", deleteRules},
		{"Expiry", expiryRules},
		{"Query", queryRules},
		{"Transact", transactRules},
		{"Concurrency", concurrencyRules},
		{"ReadAfterWrite", readAfterWriteRules},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, r := range g.tests {
				t.Run(r.name, func(t *testing.T) { r.run(t, newStore(t)) })
			}
		})
	}
}

type rule struct {
	name string
	run  func(t *testing.T, s store.Store)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// Times far enough from now that a slow run cannot move an item across its
// expiry.
func past() int64   { return time.Now().Add(-time.Hour).Unix() }
func future() int64 { return time.Now().Add(time.Hour).Unix() }

func key(sk string) store.Key { return store.Key{PK: "p#1", SK: sk} }

func item(k store.Key, attrs ...any) store.Item {
	it := store.NewItem(k)
	for i := 0; i+1 < len(attrs); i += 2 {
		it[attrs[i].(string)] = attrs[i+1]
	}
	return it
}

func mustPut(t *testing.T, s store.Store, it store.Item) {
	t.Helper()
	if err := s.Put(ctx(t), it); err != nil {
		t.Fatalf("put %s: %v", it.Key(), err)
	}
}

func mustGet(t *testing.T, s store.Store, k store.Key) store.Item {
	t.Helper()
	it, err := s.Get(ctx(t), k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	return it
}

func wantNotFound(t *testing.T, s store.Store, k store.Key) {
	t.Helper()
	if it, err := s.Get(ctx(t), k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get %s = %v, %v; want ErrNotFound", k, it, err)
	}
}

func wantCondFailed(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("err = %v; want ErrConditionFailed", err)
	}
}

// wantInvalid checks a programming error is refused without being mistaken
// for a failed condition or an outage.
func wantInvalid(t *testing.T, err error) {
	t.Helper()
	if err == nil || errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err = %v; want a plain validation error", err)
	}
}

func wantAttrs(t *testing.T, got store.Item, want store.Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("item = %v; want %v", got, want)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok || !sameValue(g, w) {
			t.Fatalf("item[%q] = %#v; want %#v (item %v)", name, g, w, got)
		}
	}
}

func sameValue(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return a == b
}
