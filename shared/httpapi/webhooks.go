package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/accounts"
	"platformapi/shared/idempotency"
	"platformapi/shared/webhooks"
)

// registerWebhooks registers the webhook endpoints of spec 4.6. A key sees
// and manages the webhooks it or one of its descendants created, in its
// project scope; every other webhook is not_found.
func (s *Server) registerWebhooks(done map[string]bool) {
	register(s, done, "GET /webhooks", http.StatusOK, s.listWebhooks)
	register(s, done, "POST /webhooks", http.StatusCreated, s.createWebhook)
	register(s, done, "PATCH /webhooks/{webhookId}", http.StatusOK, s.updateWebhook)
	register(s, done, "DELETE /webhooks/{webhookId}", http.StatusOK, s.disableWebhook)
	register(s, done, "POST /webhooks/{webhookId}/rotate-secret", http.StatusOK, s.rotateWebhookSecret)
	register(s, done, "GET /webhook-deliveries", http.StatusOK, s.listWebhookDeliveries)
	register(s, done, "POST /webhook-deliveries/{deliveryId}/replay", http.StatusCreated, s.replayWebhookDelivery)
}

// hooks is the webhook repository on the server's dependencies; it holds
// no state of its own, so building it per request costs nothing.
func (s *Server) hooks() *webhooks.Repo {
	return webhooks.NewRepo(webhooks.Config{
		Store: s.deps.Store, Sealer: s.deps.Sealer, Queue: s.deps.WebhookQueue, Now: s.now,
		Guard: webhooks.Guard{AllowPrivate: s.deps.AllowPrivateWebhooks},
	})
}

// publish sends event with data to the webhooks of the caller's account
// and project scope after an operation succeeded. It never fails the
// request: a publishing error is logged and dropped. Without a webhook
// queue it does nothing.
func (s *Server) publish(ctx context.Context, event string, data any) {
	if p := principal(ctx); p != nil {
		s.publishIn(ctx, p.ProjectID, event, data)
	}
}

// publishIn is publish for an event that happened in project projectID
// ("" at account level) whatever the caller's own scope: a project updated
// by an account-level key is news for that project's webhooks.
func (s *Server) publishIn(ctx context.Context, projectID, event string, data any) {
	p := principal(ctx)
	if s.deps.WebhookQueue == nil || p == nil || p.Key() == nil {
		return
	}
	// The account item read with the key says whether there is anyone to
	// tell; most requests of most accounts then cost no webhook query. The
	// webhook endpoints' own events are exempt: they change that count in
	// this very request (a new webhook hears its own webhook.created).
	if p.Account.Int(accounts.AttrActiveWebhooks) == 0 && !strings.HasPrefix(event, "webhook.") {
		return
	}
	detached, accountID := context.WithoutCancel(ctx), p.Key().AccountID
	idempotency.AfterCommit(ctx, func() {
		if err := s.hooks().Publish(detached, accountID, projectID, event, data); err != nil {
			loggerFrom(ctx).Error("webhook publish failed", "event", event, "error", err.Error())
		}
	})
}

// webhookCaller is the principal as the webhook domain sees it.
func webhookCaller(ctx context.Context) webhooks.Caller {
	p := principal(ctx)
	path := make([]string, len(p.Chain))
	for i, k := range p.Chain {
		path[i] = k.ID
	}
	return webhooks.Caller{AccountID: p.Key().AccountID, KeyPath: path, ProjectID: p.ProjectID}
}

// eventList is a list of event names; its schema enumerates the catalogue,
// so the OpenAPI document cannot drift from webhooks.Catalogue.
type eventList []string

func (eventList) Schema(huma.Registry) *huma.Schema {
	enum := []any{webhooks.AllEvents}
	var doc strings.Builder
	doc.WriteString("Event names, or `[\"*\"]` for every event (also those added later):\n")
	for _, e := range webhooks.Catalogue {
		enum = append(enum, e.Name)
		doc.WriteString("\n- `" + e.Name + "` (" + e.EmittedBy + "): " + e.Description)
	}
	return &huma.Schema{Type: huma.TypeArray, MinItems: ptr(1), MaxItems: ptr(50), Description: doc.String(),
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

func (s *Server) createWebhook(ctx context.Context, in *body[webhookCreateBody]) (*body[webhookWithSecret], error) {
	w, secret, err := s.hooks().Create(ctx, webhookCaller(ctx), webhooks.CreateRequest{URL: in.Body.URL, Events: in.Body.Events, Description: in.Body.Description})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventWebhookCreated, w)
	return &body[webhookWithSecret]{Body: webhookWithSecret{Webhook: *w, Secret: secret}}, nil
}

func (s *Server) listWebhooks(ctx context.Context, in *ListInput) (*body[Page[*webhooks.Webhook]], error) {
	list, next, err := s.hooks().List(ctx, webhookCaller(ctx), in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*webhooks.Webhook]]{Body: page(list, next)}, nil
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

func (s *Server) updateWebhook(ctx context.Context, in *updateWebhookInput) (*body[*webhooks.Webhook], error) {
	b := in.Body
	w, err := s.hooks().Update(ctx, webhookCaller(ctx), in.WebhookID, webhooks.UpdateRequest{URL: b.URL, Events: b.Events, Description: b.Description, Status: b.Status})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventWebhookUpdated, w)
	return &body[*webhooks.Webhook]{Body: w}, nil
}

func (s *Server) disableWebhook(ctx context.Context, in *webhookIDInput) (*body[*webhooks.Webhook], error) {
	w, err := s.hooks().Disable(ctx, webhookCaller(ctx), in.WebhookID)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventWebhookDisabled, w)
	return &body[*webhooks.Webhook]{Body: w}, nil
}

func (s *Server) rotateWebhookSecret(ctx context.Context, in *webhookIDInput) (*body[webhookWithSecret], error) {
	w, secret, err := s.hooks().RotateSecret(ctx, webhookCaller(ctx), in.WebhookID)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventWebhookSecretRotated, w)
	return &body[webhookWithSecret]{Body: webhookWithSecret{Webhook: *w, Secret: secret}}, nil
}

type listDeliveriesInput struct {
	WebhookID string `query:"webhookId" maxLength:"64" doc:"Only this webhook's deliveries"`
	Status    string `query:"status" enum:"pending,delivered,failed" doc:"Only deliveries in this status"`
	ListInput
}

func (s *Server) listWebhookDeliveries(ctx context.Context, in *listDeliveriesInput) (*body[Page[*webhooks.Delivery]], error) {
	f := webhooks.DeliveryFilter{WebhookID: in.WebhookID, Status: in.Status}
	list, next, err := s.hooks().ListDeliveries(ctx, webhookCaller(ctx), f, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*webhooks.Delivery]]{Body: page(list, next)}, nil
}

type deliveryIDInput struct {
	DeliveryID string `path:"deliveryId" doc:"Webhook delivery id (whd_…)"`
}

func (s *Server) replayWebhookDelivery(ctx context.Context, in *deliveryIDInput) (*body[*webhooks.Delivery], error) {
	d, err := s.hooks().Replay(ctx, webhookCaller(ctx), in.DeliveryID)
	if err != nil {
		return nil, err
	}
	return &body[*webhooks.Delivery]{Body: d}, nil
}
