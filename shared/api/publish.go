package api

import (
	"context"
	"strings"

	"platformapi/shared/accounts"
	"platformapi/shared/idempotency"
)

// Publish sends event with data to the webhooks of the caller's account
// and project scope after the operation succeeded (after its writes commit,
// where they commit with the stored response). It never fails the request:
// a publishing error is logged and dropped.
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
	// The account item read with the key says whether there is anyone to
	// tell; most requests of most accounts then cost no webhook query. The
	// webhook endpoints' own events are exempt: they change that count in
	// this very request (a new webhook hears its own webhook.created).
	if p.Account.Int(accounts.AttrActiveWebhooks) == 0 && !strings.HasPrefix(event, "webhook.") {
		return
	}
	detached, accountID := context.WithoutCancel(ctx), p.Key().AccountID
	idempotency.AfterCommit(ctx, func() {
		if err := k.cfg.Events.Publish(detached, accountID, projectID, event, data); err != nil {
			Logger(ctx).Error("webhook publish failed", "event", event, "error", err.Error())
		}
	})
}
