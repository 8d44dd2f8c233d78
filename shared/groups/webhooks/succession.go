package webhooks

import (
	"context"
	"fmt"
	"slices"

	"platformapi/shared/adapters/store"
)

// SuccessionOps are the writes that hand the webhooks created by key from
// to the key whose chain (root first) is to: the successor of a rolled key.
// A webhook's authority is its creator's chain (who may manage it, whose
// revocation or expiry stops it), so re-pointing it in the roll's own
// transaction is what keeps it working once the rolled key expires; each
// write is conditioned on the webhook's revision, so a concurrent edit
// fails the roll instead of being overwritten. Webhooks created by the
// rolled key's descendants stay under them (and stop with them).
func (r *Repo) SuccessionOps(ctx context.Context, accountID, from string, to []string) ([]store.Op, error) {
	all, err := r.allWithRev(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	for _, wr := range all {
		w := wr.w
		if len(w.CreatorPath) == 0 || w.CreatorPath[len(w.CreatorPath)-1] != from {
			continue
		}
		w.CreatorPath = slices.Clone(to)
		w.CreatedByKeyID = to[len(to)-1]
		it := encodeWebhook(accountID, w)
		it["rev"] = wr.rev + 1
		ops = append(ops, store.PutOp(it, store.AttrEquals("rev", wr.rev)))
	}
	return ops, nil
}

type webhookRev struct {
	w   *Webhook
	rev int64
}

// allWithRev reads every webhook of the account with its revision.
func (r *Repo) allWithRev(ctx context.Context, accountID string) ([]webhookRev, error) {
	var out []webhookRev
	after := ""
	for {
		page, err := r.st.Query(ctx, store.Query{PK: "acct#" + accountID, Prefix: "whk#", After: after, Limit: 100})
		if err != nil {
			return nil, fmt.Errorf("webhooks: list: %w", err)
		}
		for _, it := range page.Items {
			w, err := decodeWebhook(it)
			if err != nil {
				return nil, err
			}
			out = append(out, webhookRev{w: w, rev: it.Int("rev")})
			after = it.Key().SK
		}
		if !page.More {
			return out, nil
		}
	}
}
