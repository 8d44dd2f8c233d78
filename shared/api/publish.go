package api

import (
	"context"
	"strings"
	"time"

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
	// The write the event announces has committed, or commits with it in
	// the idempotency unit, so the request's own deadline no longer
	// bounds the recording: a request that ran long (a slow service, a
	// busy store) would otherwise answer its effect and drop its event.
	// The call id makes a retry of a call that died after publishing, but
	// before its response was stored, record the event only once.
	pctx, cancel := context.WithTimeout(withoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := k.cfg.Events.Publish(webhooks.WithCallID(pctx, CallID(ctx)), p.Key().AccountID, projectID, event, data); err != nil {
		Logger(ctx).Error("webhook publish failed", "event", event, "error", err.Error())
	}
}

// publishTimeout bounds the recording of an event once the request's own
// deadline no longer does: generous, as the audit record's is, since a
// throttling store or a shared emulator may take seconds.
const publishTimeout = 15 * time.Second
