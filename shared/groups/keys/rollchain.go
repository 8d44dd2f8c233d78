package keys

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"platformapi/shared/adapters/store"
)

// MaxRollChain bounds a roll chain read from the store: a key rolled every
// week for more than two years. The walk is one read per link, and a chain
// read to decide who may not act is never taken as whole when it is cut
// short, so a longer one is an error rather than a prefix.
const MaxRollChain = 128

// ErrRollChainTooLong is RollChain's answer for a chain past MaxRollChain.
var ErrRollChainTooLong = fmt.Errorf("keys: roll chain longer than %d keys", MaxRollChain)

// RollChain reads key id's roll chain from st, oldest first: the key, every
// key it was rolled from and every key it was rolled into, transitively. All
// of them share the key's parent and ancestors (a roll keeps them). It
// reads the records themselves with the store's consistent reads, so a
// successor that exists is always found: the roll writes it and the
// rolledTo mark in one transaction. A link to a missing key, or a link seen
// twice, is an error.
func RollChain(ctx context.Context, st store.Store, id string) ([]*Key, error) {
	read := func(id string) (*Key, error) {
		it, err := st.Get(ctx, recordKey(id))
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("keys: roll chain: key %s is missing", id)
		}
		if err != nil {
			return nil, fmt.Errorf("keys: roll chain: %w", err)
		}
		return decode(it)
	}
	k, err := read(id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{k.ID: true}
	follow := func(from *Key, link func(*Key) *string) ([]*Key, error) {
		var out []*Key
		for next := link(from); next != nil; next = link(out[len(out)-1]) {
			if len(seen) == MaxRollChain {
				return nil, ErrRollChainTooLong
			}
			if seen[*next] {
				return nil, fmt.Errorf("keys: roll chain: key %s is linked twice", *next)
			}
			seen[*next] = true
			k, err := read(*next)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		return out, nil
	}
	before, err := follow(k, func(k *Key) *string { return k.RolledFrom })
	if err != nil {
		return nil, err
	}
	after, err := follow(k, func(k *Key) *string { return k.RolledTo })
	if err != nil {
		return nil, err
	}
	slices.Reverse(before)
	return append(append(before, k), after...), nil
}
