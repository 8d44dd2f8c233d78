// Package webhooksapi is the webhooks endpoint group. A key sees
// and manages the webhooks it or one of its descendants created, in its
// project scope; every other webhook is not_found.
package webhooksapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/webhooks"
)

// Deps are what the group needs.
type Deps struct {
	Store  store.Store
	Sealer envelope.Sealer
	// Queue carries deliveries to the webhook worker.
	Queue queue.Queue
	// AllowPrivate lets webhook URLs resolve to private, loopback or
	// link-local addresses: a local development switch, never for production.
	AllowPrivate bool
}

type handlers struct {
	k     *api.Kernel
	hooks *webhooks.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, hooks: webhooks.NewRepo(webhooks.Config{
		Store: idempotency.Deferring(d.Store), Sealer: d.Sealer, Queue: d.Queue, Now: k.Now,
		Guard: webhooks.Guard{AllowPrivate: d.AllowPrivate},
	})}
	api.Register(k, "webhooks.list", http.StatusOK, h.list)
	api.Register(k, "webhooks.create", http.StatusCreated, h.create)
	api.Register(k, "webhooks.update", http.StatusOK, h.update)
	api.Register(k, "webhooks.disable", http.StatusOK, h.disable)
	api.Register(k, "webhooks.rotate", http.StatusOK, h.rotate)
	api.Register(k, "webhookDeliveries.list", http.StatusOK, h.listDeliveries)
	api.Register(k, "webhookDeliveries.replay", http.StatusCreated, h.replay)
	return nil
}

// caller is the principal as the webhook domain sees it.
func caller(ctx context.Context) webhooks.Caller {
	p := api.PrincipalFrom(ctx)
	return webhooks.Caller{AccountID: p.Key().AccountID, KeyPath: p.KeyPath(), ProjectID: p.ProjectID, Key: p.Key()}
}

// eventList is a list of event names; its schema enumerates the catalogue,
// so the OpenAPI document cannot drift from webhooks.Catalogue.
type eventList []string

func (eventList) Schema(huma.Registry) *huma.Schema {
	enum := []any{webhooks.AllEvents}
	var doc strings.Builder
	doc.WriteString("Event names, or `[\"*\"]` for every event (also those added later). A webhook receives only the events " +
		"its creator key could read right now: the reading operation's scopes, service and operation access, a key event only " +
		"for the creator's subtree, a service event only for services it may use, its bound project's only. An explicit event " +
		"the creator could never receive is refused (400, body.events[i]); `*` is filtered per event.\n")
	for _, e := range webhooks.Catalogue {
		enum = append(enum, e.Name)
		doc.WriteString("\n- `" + e.Name + "` (" + e.EmittedBy + "): " + e.Description)
	}
	return &huma.Schema{Type: huma.TypeArray, MinItems: new(1), MaxItems: new(50), Description: doc.String(),
		Items: &huma.Schema{Type: huma.TypeString, Enum: enum}}
}

type webhookCreateBody struct {
	URL         string    `json:"url" minLength:"1" maxLength:"2048" doc:"Where deliveries are POSTed: https, no credentials, resolving to public addresses only"`
	Events      eventList `json:"events"`
	Description string    `json:"description,omitempty" maxLength:"500"`
}

type webhookWithSecret struct {
	webhooks.Webhook
	Secret string `json:"secret" doc:"The signing secret (whsec_…). Shown only in this response; store it now. See X-Service-Signature."`
}

func (h *handlers) create(ctx context.Context, in *api.Body[webhookCreateBody]) (*api.Body[webhookWithSecret], error) {
	w, secret, err := h.hooks.Create(ctx, caller(ctx), webhooks.CreateRequest{URL: in.Body.URL, Events: in.Body.Events, Description: in.Body.Description})
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventWebhookCreated, w)
	return api.Reply(webhookWithSecret{Webhook: *w, Secret: secret}), nil
}

func (h *handlers) list(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[*webhooks.Webhook]], error) {
	list, next, err := h.hooks.List(ctx, caller(ctx), in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type webhookIDInput struct {
	WebhookID string `path:"webhookId" doc:"Webhook id (whk_…)"`
}

type webhookUpdateBody struct {
	URL         *string   `json:"url,omitempty" minLength:"1" maxLength:"2048"`
	Events      eventList `json:"events,omitempty"`
	Description *string   `json:"description,omitempty" maxLength:"500"`
	Status      *string   `json:"status,omitempty" enum:"active,disabled" doc:"Disable, or enable again"`
}

type updateWebhookInput struct {
	WebhookID string `path:"webhookId" doc:"Webhook id (whk_…)"`
	Body      webhookUpdateBody
}

func (h *handlers) update(ctx context.Context, in *updateWebhookInput) (*api.Body[*webhooks.Webhook], error) {
	b := in.Body
	w, err := h.hooks.Update(ctx, caller(ctx), in.WebhookID, webhooks.UpdateRequest{URL: b.URL, Events: b.Events, Description: b.Description, Status: b.Status})
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventWebhookUpdated, w)
	return api.Reply(w), nil
}

func (h *handlers) disable(ctx context.Context, in *webhookIDInput) (*api.Body[*webhooks.Webhook], error) {
	w, err := h.hooks.Disable(ctx, caller(ctx), in.WebhookID)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventWebhookDisabled, w)
	return api.Reply(w), nil
}

func (h *handlers) rotate(ctx context.Context, in *webhookIDInput) (*api.Body[webhookWithSecret], error) {
	w, secret, err := h.hooks.RotateSecret(ctx, caller(ctx), in.WebhookID)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventWebhookSecretRotated, w)
	return api.Reply(webhookWithSecret{Webhook: *w, Secret: secret}), nil
}

type listDeliveriesInput struct {
	WebhookID string `query:"webhookId" maxLength:"64" doc:"Only this webhook's deliveries"`
	Status    string `query:"status" enum:"pending,delivered,failed" doc:"Only deliveries in this status"`
	api.ListInput
}

func (h *handlers) listDeliveries(ctx context.Context, in *listDeliveriesInput) (*api.Body[api.Page[*webhooks.Delivery]], error) {
	f := webhooks.DeliveryFilter{WebhookID: in.WebhookID, Status: in.Status}
	list, next, err := h.hooks.ListDeliveries(ctx, caller(ctx), f, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type deliveryIDInput struct {
	DeliveryID string `path:"deliveryId" doc:"Webhook delivery id (whd_…)"`
}

func (h *handlers) replay(ctx context.Context, in *deliveryIDInput) (*api.Body[*webhooks.Delivery], error) {
	d, err := h.hooks.Replay(ctx, caller(ctx), in.DeliveryID)
	if err != nil {
		return nil, err
	}
	return api.Reply(d), nil
}
