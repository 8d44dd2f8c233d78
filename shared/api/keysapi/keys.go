// Package keysapi is the API-keys endpoint group (spec 4.1): create a child
// key (or an account's first key with a credit token), list the caller and
// its descendants, revoke a subtree. Delegation rules live in keys; this
// package only adapts them to HTTP.
package keysapi

import (
	"context"
	"net/http"

	"platformapi/shared/api"
	"platformapi/shared/idempotency"
	"platformapi/shared/keys"
	"platformapi/shared/projects"
	"platformapi/shared/store"
	"platformapi/shared/webhooks"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
}

type handlers struct {
	k        *api.Kernel
	keys     *keys.Repo
	projects *projects.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) {
	h := &handlers{k: k, keys: keys.NewRepo(idempotency.Deferring(d.Store), k.Now), projects: projects.NewRepo(d.Store, k.Now)}
	api.Register(k, "apiKeys.create", http.StatusCreated, h.create)
	api.Register(k, "apiKeys.list", http.StatusOK, h.list)
	api.Register(k, "apiKeys.revoke", http.StatusOK, h.revoke)
}

type createdKey struct {
	keys.Key
	Secret string `json:"secret" doc:"The key itself. Shown only in this response; store it now."`
}

func (h *handlers) create(ctx context.Context, in *api.Body[keys.CreateKeyRequest]) (*api.Body[createdKey], error) {
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
	h.k.Publish(ctx, webhooks.EventAPIKeyCreated, c.Key)
	return api.Reply(createdKey{Key: *c.Key, Secret: c.Secret}), nil
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
	h.k.Publish(ctx, webhooks.EventAPIKeyRevoked, k)
	return api.Reply(k), nil
}
