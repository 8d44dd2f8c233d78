package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/webhooks/eventdef"
)

// MaxPayload bounds a delivery body, and keeps it within one queue message
// and one table item.
const MaxPayload = 256 << 10

// Publish records event with data in the outbox (outbox.go) and fans it
// out once the operation's writes are committed. Inside an idempotency
// unit the outbox item joins the unit's transaction, so the event exists
// exactly when the write and its stored response do; outside one it is
// written at once, before the caller answers. The fan-out then runs after
// the commit; when it fails or the process dies first, the outbox sweep
// (SweepOutbox) delivers the event later, exactly once. Without a queue it
// does nothing.
//
// The error is the recording's, for the caller's log: callers publish after
// their operation succeeded and never fail the request because of it.
func (r *Repo) Publish(ctx context.Context, accountID, projectID, event string, data any) error {
	if r.q == nil {
		return nil
	}
	e, err := r.record(ctx, accountID, projectID, event, data)
	if err != nil || e == nil {
		return err
	}
	idempotency.AfterCommit(ctx, func() { r.dispatchOrLeave(ctx, e) })
	return nil
}

// dispatchOrLeave fans e out after its commit, outliving the request; a
// failure leaves e on the outbox for the sweep.
func (r *Repo) dispatchOrLeave(ctx context.Context, e *outboxEvent) {
	if err := r.dispatch(context.WithoutCancel(ctx), e); err != nil {
		slog.Default().Warn("webhooks: fan-out failed; the outbox sweep retries it", "event", e.Payload.ID, "type", e.Payload.Type, "error", err.Error())
	}
}

// fanOut records one pending delivery of e for every webhook of the account
// that is active, subscribes to the event, is in scope of its project
// (account-level webhooks get every project's events, project webhooks
// only their project's), and whose creator could read the event right now
// (visibility.go): its chain alive, the reading operation allowed, the
// subject visible, its bound project the event's. Then it queues them for
// the worker.
//
// A delivery's id is derived from the event id and the webhook id, so a
// second fan-out of the same event (a sweep after a crash, two sweeps at
// once) finds the deliveries the first recorded and creates none: it only
// queues again those still pending and never attempted, whose message the
// first may have died before sending (the worker ignores a message whose
// delivery is already done).
//
// Cost: one query of the account's webhooks, then one BatchGet of every
// target's creator chain (and an api_key event's subject key), each key
// once, at most 100 per batch, one BatchGet of the deliveries' ids.
func (r *Repo) fanOut(ctx context.Context, e *outboxEvent) error {
	et, ok := eventType(e.Payload.Type)
	if !ok {
		return fmt.Errorf("webhooks: publish: event %q is not in the catalogue", e.Payload.Type)
	}
	accountID, projectID := e.Payload.AccountID, ""
	if e.Payload.ProjectID != nil {
		projectID = *e.Payload.ProjectID
	}
	all, err := r.all(ctx, accountID)
	if err != nil {
		return err
	}
	var targets []*Webhook
	var paths [][]string
	for _, w := range all {
		if w.Status == StatusActive && subscribes(w, e.Payload.Type) && (w.ProjectID == nil || *w.ProjectID == projectID) {
			targets = append(targets, w)
			paths = append(paths, w.CreatorPath)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	subj := subjectOf(et, e.Payload.Data)
	var extra []string
	if et.Subject == eventdef.SubjectKey && subj.ID != "" {
		extra = []string{subj.ID}
	}
	now := r.now().UTC()
	known, err := creatorKeys(ctx, r.st, extra, paths...)
	if err != nil {
		return err
	}
	var ds []*Delivery
	for _, w := range targets {
		if alive(w.CreatorPath, known, now) && receives(w, known[w.CreatedByKeyID], et, subj, projectID, known, all) {
			ds = append(ds, &Delivery{ID: deliveryIDOf(e.Payload.ID, w.ID), WebhookID: w.ID, Event: e.Payload.Type, EventID: e.Payload.ID,
				Payload: e.Body, Status: DeliveryPending, CreatedAt: now, NextAttemptAt: &now})
		}
	}
	fresh, err := r.unrecorded(ctx, accountID, ds)
	if err != nil {
		return err
	}
	return r.enqueue(ctx, accountID, ds, fresh)
}

func subscribes(w *Webhook, event string) bool {
	return slices.Contains(w.Events, AllEvents) || slices.Contains(w.Events, event)
}

// unrecorded reads which of ds are not stored yet, and drops from ds those
// that need nothing more: stored and already attempted or finished.
func (r *Repo) unrecorded(ctx context.Context, accountID string, ds []*Delivery) (map[string]bool, error) {
	fresh := make(map[string]bool, len(ds))
	for start := 0; start < len(ds); start += 100 {
		batch := ds[start:min(start+100, len(ds))]
		keys := make([]store.Key, len(batch))
		for i, d := range batch {
			keys[i] = deliveryKey(accountID, d.ID)
			fresh[d.ID] = true
		}
		its, err := r.st.BatchGet(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("webhooks: read deliveries: %w", err)
		}
		for _, it := range its {
			d, err := decodeDelivery(it)
			if err != nil {
				return nil, err
			}
			delete(fresh, d.ID)
			if d.Status != DeliveryPending || d.Attempts > 0 {
				i := slices.IndexFunc(ds, func(x *Delivery) bool { return x.ID == d.ID })
				ds[i] = nil
			}
		}
	}
	return fresh, nil
}

// enqueue writes the fresh pending deliveries of ds (nil entries are done
// with) and queues one message for each of ds. A delivery whose message
// could not be queued is marked failed, so nothing waits forever for a
// message that does not exist; it can be replayed.
func (r *Repo) enqueue(ctx context.Context, accountID string, ds []*Delivery, fresh map[string]bool) error {
	ds = slices.DeleteFunc(ds, func(d *Delivery) bool { return d == nil })
	var ops []store.Op
	for _, d := range ds {
		if fresh[d.ID] {
			ops = append(ops, store.PutOp(encodeDelivery(accountID, d), store.NotExists()))
		}
	}
	for start := 0; start < len(ops); start += store.MaxTransactItems {
		if err := r.st.Transact(ctx, ops[start:min(start+store.MaxTransactItems, len(ops))]); err != nil {
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
