package webhooks

import (
	"context"
	"fmt"
	"time"

	"platformapi/shared/store"
)

// liveKeys reads the key records of every id in paths and returns the ids
// of the keys that are neither revoked nor expired. A webhook whose creator
// path holds a key not in the result lives under a dead authority (spec 3:
// revoking a key stops the webhooks created under it) and gets nothing.
//
// It reads the records keys.Repo writes (keys/repo.go "Storage layout"):
// key#<id> | key, with revocation as the revokedAt attribute and the expiry
// as expiresAt in the doc JSON. TestRevokedCreatorGetsNoDelivery and
// TestExpiredCreatorGetsNoDelivery pin this reading to keys.Repo.
func liveKeys(ctx context.Context, st store.Store, now time.Time, paths ...[]string) (map[string]bool, error) {
	var want []store.Key
	seen := map[string]bool{}
	for _, p := range paths {
		for _, id := range p {
			if !seen[id] {
				seen[id] = true
				want = append(want, store.Key{PK: "key#" + id, SK: "key"})
			}
		}
	}
	live := map[string]bool{}
	for start := 0; start < len(want); start += 100 {
		batch := want[start:min(start+100, len(want))]
		got, err := st.BatchGet(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("webhooks: read creator keys: %w", err)
		}
		for _, k := range batch {
			it, ok := got[k.String()]
			if !ok || it.Int("revokedAt") != 0 {
				continue
			}
			var doc struct {
				ID        string     `json:"id"`
				ExpiresAt *time.Time `json:"expiresAt"`
			}
			if err := it.Doc(&doc); err != nil {
				return nil, fmt.Errorf("webhooks: decode key %s: %w", k.PK, err)
			}
			if doc.ExpiresAt == nil || now.Before(*doc.ExpiresAt) {
				live[doc.ID] = true
			}
		}
	}
	return live, nil
}

// alive reports whether every key of path is live.
func alive(path []string, live map[string]bool) bool {
	for _, id := range path {
		if !live[id] {
			return false
		}
	}
	return len(path) > 0
}
