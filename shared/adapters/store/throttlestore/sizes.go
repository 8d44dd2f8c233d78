package throttlestore

import (
	"sync"

	"platformapi/shared/adapters/store"
)

// Sizes remembers the size of every item last seen whole, by key, so that
// a write is billed on the bigger of the item it replaces and the item it
// leaves, as DynamoDB bills it. The throttling store and the bench's meter
// both keep one. The zero value is ready to use.
type Sizes struct {
	mu sync.Mutex
	m  map[string]int
}

// Seen records the size of it and returns it.
func (s *Sizes) Seen(it store.Item) int {
	n := ItemSize(it)
	s.set(it.Key(), n)
	return n
}

// Gone records that the item at k is absent.
func (s *Sizes) Gone(k store.Key) { s.set(k, 0) }

func (s *Sizes) set(k store.Key, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]int{}
	}
	s.m[k.String()] = n
}

// Known is the size last seen of the item at k and whether it was seen.
func (s *Sizes) Known(k store.Key) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.m[k.String()]
	return n, ok
}

// MemberSize is what a write of op is billed on, the item's size before it
// being before (0 when unknown): at least its key, and what it puts or sets.
func MemberSize(op store.Op, before int) int {
	size := max(before, KeySize(op.Key))
	switch op.Kind {
	case store.OpPut:
		size = max(size, ItemSize(op.Item))
	case store.OpUpdate:
		size = max(size, UpdateSize(op.Key, op.Update))
	}
	return size
}
