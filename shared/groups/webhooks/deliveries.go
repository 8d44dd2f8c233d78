package webhooks

import (
	"context"
	"errors"
	"fmt"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
)

var errNoDelivery = apierr.New(apierr.NotFound, "No such webhook delivery.")

// DeliveryFilter narrows ListDeliveries; empty fields do not filter.
type DeliveryFilter struct {
	WebhookID string
	Status    string
}

// ListDeliveries pages through the deliveries of the webhooks c manages,
// newest first. A webhookId c does not manage lists nothing.
func (r *Repo) ListDeliveries(ctx context.Context, c Caller, f DeliveryFilter, limit int, cursor string) ([]*Delivery, string, error) {
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	all, err := r.all(ctx, c.AccountID)
	if err != nil {
		return nil, "", err
	}
	managed := map[string]bool{}
	for _, w := range all {
		if c.manages(w) && (f.WebhookID == "" || w.ID == f.WebhookID) {
			managed[w.ID] = true
		}
	}
	if len(managed) == 0 {
		return nil, "", nil
	}
	var out []*Delivery
	for {
		page, err := r.st.Query(ctx, store.Query{PK: "acct#" + c.AccountID, Prefix: "whd#", After: after, Limit: limit, Reverse: true})
		if err != nil {
			return nil, "", fmt.Errorf("webhooks: list deliveries: %w", err)
		}
		for i, it := range page.Items {
			after = it.Key().SK
			if !managed[it.String("webhookId")] || f.Status != "" && it.String("status") != f.Status {
				continue
			}
			d, err := decodeDelivery(it)
			if err != nil {
				return nil, "", err
			}
			out = append(out, d)
			if len(out) == limit {
				return out, nextCursor(after, page.More || i < len(page.Items)-1), nil
			}
		}
		if !page.More {
			return out, "", nil
		}
	}
}

// Replay queues a new delivery of the same event (same payload and event
// id, so receivers can deduplicate) to the webhook of delivery id, which c
// must manage. The webhook must be active and its creator chain valid.
func (r *Repo) Replay(ctx context.Context, c Caller, id string) (*Delivery, error) {
	if r.q == nil {
		return nil, errNotConfigured
	}
	orig, err := r.delivery(ctx, c.AccountID, id)
	if err != nil {
		return nil, err
	}
	w, err := r.Get(ctx, c, orig.WebhookID)
	if errors.Is(err, errNotFound) {
		return nil, errNoDelivery
	}
	if err != nil {
		return nil, err
	}
	if w.Status != StatusActive {
		return nil, apierr.New(apierr.Conflict, "Webhook %s is disabled; enable it before replaying.", w.ID)
	}
	now := r.now().UTC()
	ok, err := r.creatorAlive(ctx, w, now)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.New(apierr.Conflict, "The key that created webhook %s, or one of its ancestors, is revoked or expired; it receives no events.", w.ID)
	}
	d := &Delivery{ID: ids.New("whd", now), WebhookID: w.ID, Event: orig.Event, EventID: orig.EventID, Payload: orig.Payload,
		Status: DeliveryPending, ReplayOf: &orig.ID, CreatedAt: now, NextAttemptAt: &now}
	if err := r.enqueue(ctx, c.AccountID, []*Delivery{d}, map[string]bool{d.ID: true}); err != nil {
		return nil, err
	}
	return d, nil
}

func (r *Repo) delivery(ctx context.Context, accountID, id string) (*Delivery, error) {
	if !ids.Valid("whd", id) {
		return nil, errNoDelivery
	}
	it, err := r.st.Get(ctx, deliveryKey(accountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoDelivery
	}
	if err != nil {
		return nil, fmt.Errorf("webhooks: get delivery: %w", err)
	}
	return decodeDelivery(it)
}
