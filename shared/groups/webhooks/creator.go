package webhooks

import (
	"context"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/keys"
)

// creatorKeys reads, in batches, the key records of every id in paths and
// of extra (an event's subject key), each id once. A webhook is only as
// good as its creator chain: revoking a key stops the webhooks
// created under it; and the creator key's scopes, services, operations and
// project decide which events it may receive (visibility.go).
func creatorKeys(ctx context.Context, st store.Store, extra []string, paths ...[]string) (map[string]*keys.Key, error) {
	var want []string
	seen := map[string]bool{}
	for _, p := range append(paths, extra) {
		for _, id := range p {
			if !seen[id] {
				seen[id] = true
				want = append(want, id)
			}
		}
	}
	known, err := keys.Load(ctx, st, want)
	if err != nil {
		return nil, fmt.Errorf("webhooks: read creator keys: %w", err)
	}
	return known, nil
}

// alive reports whether every key of path exists and is neither revoked nor
// expired at now.
func alive(path []string, known map[string]*keys.Key, now time.Time) bool {
	for _, id := range path {
		k := known[id]
		if k == nil || k.RevokedAt != nil || k.Expired(now) {
			return false
		}
	}
	return len(path) > 0
}

// creatorAlive reads w's creator chain and reports whether it is alive.
func (r *Repo) creatorAlive(ctx context.Context, w *Webhook, now time.Time) (bool, error) {
	known, err := creatorKeys(ctx, r.st, nil, w.CreatorPath)
	if err != nil {
		return false, err
	}
	return alive(w.CreatorPath, known, now), nil
}
