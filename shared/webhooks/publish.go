package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"platformapi/shared/ids"
	"platformapi/shared/queue"
	"platformapi/shared/store"
)

// MaxPayload bounds a delivery body, and keeps it within one queue message
// and one table item.
const MaxPayload = 256 << 10

// Publish records one pending delivery of event for every webhook of the
// account that is active, subscribes to event, is in scope of projectID
// (account-level webhooks get every project's events, project webhooks
// only their project's), and whose creator could read the event right now
// (visibility.go): its chain alive, the reading operation allowed, the
// subject visible, its bound project the event's. Then it queues them for
// the worker. Without a queue it does nothing.
//
// Cost: one query of the account's webhooks, then one BatchGet of every
// target's creator chain (and an api_key event's subject key), each key
// once, at most 100 per batch. Callers run it after commit (AfterCommit),
// off the answer's critical path.
//
// Callers publish after their operation succeeded and must never fail the
// request because of it: the error is for their log.
func (r *Repo) Publish(ctx context.Context, accountID, projectID, event string, data any) error {
	if r.q == nil {
		return nil
	}
	et, ok := eventType(event)
	if !ok {
		return fmt.Errorf("webhooks: publish: event %q is not in the catalogue", event)
	}
	all, err := r.all(ctx, accountID)
	if err != nil {
		return err
	}
	var targets []*Webhook
	var paths [][]string
	for _, w := range all {
		if w.Status == StatusActive && subscribes(w, event) && (w.ProjectID == nil || *w.ProjectID == projectID) {
			targets = append(targets, w)
			paths = append(paths, w.CreatorPath)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("webhooks: publish %s: %w", event, err)
	}
	subj := subjectOf(et, raw)
	var extra []string
	if et.Subject == SubjectKey && subj.ID != "" {
		extra = []string{subj.ID}
	}
	now := r.now().UTC()
	known, err := creatorKeys(ctx, r.st, extra, paths...)
	if err != nil {
		return err
	}
	p := Payload{ID: ids.New("evt", now), Type: event, CreatedAt: now, AccountID: accountID, Data: raw}
	if projectID != "" {
		p.ProjectID = &projectID
	}
	body, _ := json.Marshal(p)
	if len(body) > MaxPayload {
		return fmt.Errorf("webhooks: publish %s: payload of %d bytes exceeds %d", event, len(body), MaxPayload)
	}
	var ds []*Delivery
	for _, w := range targets {
		if alive(w.CreatorPath, known, now) && receives(w, known[w.CreatedByKeyID], et, subj, projectID, known, all) {
			ds = append(ds, &Delivery{ID: ids.New("whd", now), WebhookID: w.ID, Event: event, EventID: p.ID,
				Payload: body, Status: DeliveryPending, CreatedAt: now, NextAttemptAt: &now})
		}
	}
	return r.enqueue(ctx, accountID, ds)
}

func subscribes(w *Webhook, event string) bool {
	return slices.Contains(w.Events, AllEvents) || slices.Contains(w.Events, event)
}

// enqueue writes pending deliveries and queues one message each. A delivery
// whose message could not be queued is marked failed, so nothing waits
// forever for a message that does not exist; it can be replayed.
func (r *Repo) enqueue(ctx context.Context, accountID string, ds []*Delivery) error {
	for start := 0; start < len(ds); start += store.MaxTransactItems {
		var ops []store.Op
		for _, d := range ds[start:min(start+store.MaxTransactItems, len(ds))] {
			ops = append(ops, store.PutOp(encodeDelivery(accountID, d), store.NotExists()))
		}
		if err := r.st.Transact(ctx, ops); err != nil {
			return fmt.Errorf("webhooks: record deliveries: %w", err)
		}
	}
	var errs []error
	for start := 0; start < len(ds); start += 10 {
		batch := ds[start:min(start+10, len(ds))]
		msgs := make([]queue.Message, len(batch))
		for i, d := range batch {
			msgs[i].Body, _ = json.Marshal(message{AccountID: accountID, DeliveryID: d.ID})
		}
		if err := r.q.Send(ctx, msgs...); err != nil {
			errs = append(errs, fmt.Errorf("webhooks: queue deliveries: %w", err))
			for _, d := range batch {
				reason := "the delivery could not be queued; replay it"
				d.Status, d.LastError, d.NextAttemptAt = DeliveryFailed, &reason, nil
				if _, err := r.st.Update(ctx, deliveryKey(accountID, d.ID), store.Update{Set: map[string]any{store.AttrDoc: store.DocOf(d), "status": d.Status}}, store.Exists()); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}
