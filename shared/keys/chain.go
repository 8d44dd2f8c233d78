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
	chain, err := r.loadAncestors(ctx, k)
	if err != nil {
		return nil, err
	}
	now := r.now()
	for _, c := range chain {
		if c.RevokedAt != nil {
			return nil, apierr.New(apierr.KeyRevoked, "The API key or one of its ancestors has been revoked.")
		}
	}
	for _, c := range chain {
		if c.Expired(now) {
			return nil, apierr.New(apierr.KeyExpired, "The API key or one of its ancestors has expired.")
		}
	}
	return chain, nil
}
