package api

import (
	"context"
	"strings"

	"platformapi/shared/domain/accounts"
	"platformapi/shared/groups/webhooks"
)

// Publish sends event with data to the webhooks of the caller's account
// and project scope. The publisher records it in its outbox with the
// operation's writes (in the idempotency unit where the route commits with
// its stored response, else before the response is stored) and fans it
// out after the commit, so an acknowledged write never loses its event
// (webhooks/outbox.go). It never fails the request: a recording error is
// logged and dropped.
func (k *Kernel) Publish(ctx context.Context, event string, data any) {
	if p := PrincipalFrom(ctx); p != nil {
		k.PublishIn(ctx, p.ProjectID, event, data)
	}
}

// PublishIn is Publish for an event that happened in project projectID
// ("" at account level) whatever the caller's own scope: a project updated
// by an account-level key is news for that project's webhooks.
func (k *Kernel) PublishIn(ctx context.Context, projectID, event string, data any) {
	p := PrincipalFrom(ctx)
	if k.cfg.Events == nil || p == nil || p.Key() == nil {
		return
	}
	// The account item says whether there is anyone to tell; most
	// requests of most accounts then cost no outbox write (an unreadable
	// item publishes: a wasted write, not a lost event). The webhook
	// endpoints' own events are exempt: they change that count in this
	// very request (a new webhook hears its own webhook.created).
	if acct, err := p.AccountItem(ctx); err == nil && acct.Int(accounts.AttrActiveWebhooks) == 0 && !strings.HasPrefix(event, "webhook.") {
		return
	}
	// The call id makes a retry of a call that died after publishing, but
	// before its response was stored, record the event only once.
	if err := k.cfg.Events.Publish(webhooks.WithCallID(ctx, CallID(ctx)), p.Key().AccountID, projectID, event, data); err != nil {
		Logger(ctx).Error("webhook publish failed", "event", event, "error", err.Error())
	}
}
