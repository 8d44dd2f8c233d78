// Package keysapi is the API-keys endpoint group: create a child
// key (or an account's first key with a credit token), list the caller and
// its descendants, revoke a subtree, roll a key into a successor.
// Delegation rules live in keys; this package only adapts them to HTTP.
package keysapi

import (
	"context"
	"net/http"
	"slices"

	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/projects"
	"platformapi/shared/groups/webhooks"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
}

type handlers struct {
	k *api.Kernel
	// keys commits its writes with the stored response (the routes'
	// .commit()); webhooks only reads, to move a rolled key's webhooks.
	keys     *keys.Repo
	projects *projects.Repo
	webhooks *webhooks.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{
		k: k, keys: keys.NewRepo(idempotency.Deferring(d.Store), k.Now), projects: projects.NewRepo(d.Store, k.Now),
		webhooks: webhooks.NewRepo(webhooks.Config{Store: d.Store, Now: k.Now}),
	}
	api.Register(k, "apiKeys.create", http.StatusCreated, h.create)
	api.Register(k, "apiKeys.list", http.StatusOK, h.list)
	api.Register(k, "apiKeys.revoke", http.StatusOK, h.revoke)
	api.Register(k, "apiKeys.roll", http.StatusCreated, h.roll)
	return nil
}

// CreatedKey is a key with its secret, shown once. It is exported because
// huma documents the fields of an embedded struct (rolledKey's) only when
// its type is.
type CreatedKey struct {
	keys.Key
	Secret string `json:"secret" doc:"The key itself. Shown only in this response; store it now."`
}

func (h *handlers) create(ctx context.Context, in *api.Body[keys.CreateKeyRequest]) (*api.Body[CreatedKey], error) {
	p := api.PrincipalFrom(ctx)
	var (
		c   *keys.Created
		err error
	)
	if p.CreditToken != nil {
		c, err = h.keys.CreateAccount(ctx, *p.CreditToken, in.Body)
	} else {
		k := p.Key()
		c, err = h.keys.CreateChild(ctx, p.Chain, in.Body, func(id string) bool {
			ok, err := h.projects.Active(ctx, k.AccountID, id)
			return err == nil && ok
		})
	}
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventAPIKeyCreated, c.Key)
	return api.Reply(CreatedKey{Key: *c.Key, Secret: c.Secret}), nil
}

func (h *handlers) list(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[*keys.Key]], error) {
	ks, next, err := h.keys.List(ctx, api.PrincipalFrom(ctx).Chain, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(ks, next)), nil
}

type keyIDInput struct {
	ID string `path:"id" doc:"API key id (key_…)"`
}

func (h *handlers) revoke(ctx context.Context, in *keyIDInput) (*api.Body[*keys.Key], error) {
	k, err := h.keys.Revoke(ctx, api.PrincipalFrom(ctx).Key(), in.ID)
	if err != nil {
		return nil, err
	}
	k.Status = "revoked"
	h.k.Publish(ctx, eventAPIKeyRevoked, k)
	return api.Reply(k), nil
}

type rollInput struct {
	ID   string `path:"id" doc:"API key id (key_…) to roll: the caller or one of its descendants"`
	Body keys.RollRequest
}

type rolledKey struct {
	CreatedKey
	PreviousKey *keys.Key `json:"previousKey" doc:"The rolled key: it works until its expiresAt, and names this one in rolledTo"`
}

// rolledEvent is the data of api_key.rolled: the successor's record (never
// its secret) and the rolled key with its new expiry.
type rolledEvent struct {
	// ID is the successor's id: webhooks see the event by the subtree rule
	// on it (the successor is the rolled key's sibling).
	ID          string    `json:"id"`
	Key         *keys.Key `json:"key"`
	PreviousKey *keys.Key `json:"previousKey"`
}

// roll replaces a key by a successor with the same policy (Stripe's roll):
// the webhooks the rolled key created move to the successor in the same
// transaction, so they outlive the rolled key's expiry.
func (h *handlers) roll(ctx context.Context, in *rollInput) (*api.Body[rolledKey], error) {
	p := api.PrincipalFrom(ctx)
	moveWebhooks := func(ctx context.Context, old, next *keys.Key) ([]store.Op, error) {
		return h.webhooks.SuccessionOps(ctx, old.AccountID, old.ID, append(slices.Clone(next.Ancestors), next.ID))
	}
	r, err := h.keys.Roll(ctx, p.Key(), in.ID, in.Body.ExpiresAt, moveWebhooks)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventAPIKeyRolled, rolledEvent{ID: r.Key.ID, Key: r.Key, PreviousKey: r.Previous})
	return api.Reply(rolledKey{CreatedKey: CreatedKey{Key: *r.Key, Secret: r.Secret}, PreviousKey: r.Previous}), nil
}
