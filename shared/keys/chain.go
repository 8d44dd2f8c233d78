package keys

import (
	"context"
	"errors"
	"fmt"

	"platformapi/shared/apierr"
	"platformapi/shared/store"
)

// Chain loads key id and its ancestors, root first, as Authenticate does
// but without a secret: for work done later on a key's authority (a durable
// run), which must stop when the key or an ancestor has been revoked or has
// expired since. It reads every key on every call, like Authenticate, and
// reports an absent key as invalid_api_key, a revoked chain as key_revoked
// and an expired one as key_expired (revocation wins over expiry).
func (r *Repo) Chain(ctx context.Context, id string) ([]*Key, error) {
	it, err := r.st.Get(ctx, recordKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.New(apierr.InvalidAPIKey, "The API key no longer exists.")
	}
	if err != nil {
		return nil, fmt.Errorf("keys: chain: %w", err)
	}
	k, err := decode(it)
	if err != nil {
		return nil, err
	}
	chain := []*Key{k}
	if len(k.Ancestors) > 0 {
		keys := make([]store.Key, len(k.Ancestors))
		for i, a := range k.Ancestors {
			keys[i] = recordKey(a)
		}
		known := map[string]*Key{}
		ancestors, err := r.fetch(ctx, keys, known)
		if err != nil {
			return nil, err
		}
		if len(ancestors) != len(keys) {
			return nil, apierr.New(apierr.InvalidAPIKey, "An ancestor of the API key no longer exists.")
		}
		chain = append(ancestors, k)
	}
	if err := valid(chain, r.now()); err != nil {
		return nil, err
	}
	return chain, nil
}
