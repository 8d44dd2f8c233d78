package webhooks

import (
	"context"
	"errors"
	"fmt"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/groups/keys"
)

// save writes w if nobody changed it since it was read at rev, moving the
// account's count of active webhooks by active (+1, -1 or 0) in the same
// transaction.
func (r *Repo) save(ctx context.Context, accountID string, w *Webhook, rev, active int64) error {
	it := encodeWebhook(accountID, w)
	it["rev"] = rev + 1
	err := r.st.Transact(ctx, append([]store.Op{store.PutOp(it, store.AttrEquals("rev", rev))}, countActive(accountID, active)...))
	var tx *store.TxError
	switch {
	case errors.As(err, &tx) && tx.Index == 1:
		return errTooMany
	case errors.Is(err, store.ErrConditionFailed):
		return errConcurrentEdit
	case err != nil:
		return fmt.Errorf("webhooks: save: %w", err)
	}
	return nil
}

// countActive moves the account's count of active webhooks, which bounds
// them (MaxActivePerAccount) and lets publishing skip accounts without any.
func countActive(accountID string, delta int64) []store.Op {
	if delta == 0 {
		return nil
	}
	var conds []store.Cond
	if delta > 0 {
		conds = append(conds, store.NumBelow(accounts.AttrActiveWebhooks, MaxActivePerAccount))
	}
	return []store.Op{store.UpdateOp(accounts.Key(accountID), store.Update{Add: map[string]int64{accounts.AttrActiveWebhooks: delta}}, conds...)}
}

// Update changes the URL, events, description or status of a webhook c
// manages. Re-enabling counts against MaxActivePerAccount.
func (r *Repo) Update(ctx context.Context, c Caller, id string, req UpdateRequest) (*Webhook, error) {
	w, rev, err := r.get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if req.URL != nil {
		if err := r.guard.CheckURL(ctx, *req.URL, "body.url"); err != nil {
			return nil, err
		}
		w.URL = *req.URL
	}
	if req.Events != nil {
		if w.Events, err = normalizeEvents(req.Events, "body.events"); err != nil {
			return nil, err
		}
		creator, err := r.creator(ctx, c, w)
		if err != nil {
			return nil, err
		}
		if err := checkSubscriptions(creator, w.Events, req.Events, "body.events"); err != nil {
			return nil, err
		}
	}
	if req.Description != nil {
		if err := checkDescription(*req.Description); err != nil {
			return nil, err
		}
		w.Description = *req.Description
	}
	now := r.now().UTC()
	var active int64
	if req.Status != nil && *req.Status != w.Status {
		switch *req.Status {
		case StatusDisabled:
			w.Status, w.DisabledAt, active = StatusDisabled, &now, -1
		case StatusActive:
			w.Status, w.DisabledAt, active = StatusActive, nil, 1
		default:
			return nil, apierr.Invalid("Invalid status.", apierr.Field("body.status", "active or disabled"))
		}
	}
	w.UpdatedAt = now
	if err := r.save(ctx, c.AccountID, w, rev, active); err != nil {
		return nil, err
	}
	return w, nil
}

// creator is the record of the key w lives under: the caller's own when it
// created w, otherwise read (the caller is an ancestor, possibly broader).
func (r *Repo) creator(ctx context.Context, c Caller, w *Webhook) (*keys.Key, error) {
	if c.Key != nil && c.Key.ID == w.CreatedByKeyID {
		return c.Key, nil
	}
	known, err := keys.Load(ctx, r.st, []string{w.CreatedByKeyID})
	if err != nil {
		return nil, fmt.Errorf("webhooks: read creator: %w", err)
	}
	k := known[w.CreatedByKeyID]
	if k == nil {
		return nil, fmt.Errorf("webhooks: creator key %s of %s is missing", w.CreatedByKeyID, w.ID)
	}
	return k, nil
}

// Disable stops deliveries to a webhook c manages; the record stays, with
// its deliveries. Disabling a disabled webhook changes nothing.
func (r *Repo) Disable(ctx context.Context, c Caller, id string) (*Webhook, error) {
	w, rev, err := r.get(ctx, c, id)
	if err != nil || w.Status == StatusDisabled {
		return w, err
	}
	now := r.now().UTC()
	w.Status, w.DisabledAt, w.UpdatedAt = StatusDisabled, &now, now
	if err := r.save(ctx, c.AccountID, w, rev, -1); err != nil {
		return nil, err
	}
	return w, nil
}

// RotateSecret gives a webhook c manages a new signing secret and returns
// it, the only time it is shown. The replaced secret keeps signing (as a
// second v1 entry) for RotationGrace, so receivers can roll over; a secret
// replaced before that is dropped at once.
func (r *Repo) RotateSecret(ctx context.Context, c Caller, id string) (*Webhook, string, error) {
	if r.sealer == nil {
		return nil, "", errNotConfigured
	}
	w, rev, err := r.get(ctx, c, id)
	if err != nil {
		return nil, "", err
	}
	secret := NewSecret()
	sealed, err := r.sealer.Seal(ctx, []byte(secret), []byte(w.ID))
	if err != nil {
		return nil, "", fmt.Errorf("webhooks: seal secret: %w", err)
	}
	now := r.now().UTC()
	grace := now.Add(RotationGrace)
	w.previousSecret, w.secret = w.secret, sealed
	w.PreviousSecretExpiresAt, w.UpdatedAt = &grace, now
	if err := r.save(ctx, c.AccountID, w, rev, 0); err != nil {
		return nil, "", err
	}
	return w, secret, nil
}
