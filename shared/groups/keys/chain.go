package keys

import (
	"context"
	"errors"
	"fmt"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
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

// Load reads the records of the keys ids, for work that checks a key's
// authority without its secret and across many keys at once (webhook
// publishing reads the creator chains of every target in one go). Absent
// keys are missing from the result; revoked ones carry RevokedAt. Ids are
// read in batches of maxBatchGet, duplicates included: callers dedupe.
func Load(ctx context.Context, st store.Store, ids []string) (map[string]*Key, error) {
	out := make(map[string]*Key, len(ids))
	for start := 0; start < len(ids); start += maxBatchGet {
		batch := ids[start:min(start+maxBatchGet, len(ids))]
		wanted := make([]store.Key, len(batch))
		for i, id := range batch {
			wanted[i] = recordKey(id)
		}
		got, err := st.BatchGet(ctx, wanted)
		if err != nil {
			return nil, fmt.Errorf("keys: load: %w", err)
		}
		for _, it := range got {
			k, err := decode(it)
			if err != nil {
				return nil, err
			}
			out[k.ID] = k
		}
	}
	return out, nil
}

// maxBatchGet is the store's bound on one BatchGet.
const maxBatchGet = 100
