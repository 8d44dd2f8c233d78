package webhooks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/webhooks"
)

// outbox reads every event waiting in the outbox.
func (f *fixture) outbox() []store.Item {
	f.t.Helper()
	var out []store.Item
	for shard := range webhooks.OutboxShards {
		page, err := f.st.Query(context.Background(), store.Query{PK: fmt.Sprintf("evo#%02d", shard), Limit: 100})
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, page.Items...)
	}
	return out
}

// inUnit runs publish inside an idempotency unit as the request path does,
// then commits the unit with a stored response, or abandons the request
// when commit is false. It returns the unit, whose Committed the caller
// runs or, to play a process killed right after the commit, does not.
func (f *fixture) inUnit(commit bool, publish func(ctx context.Context)) *idempotency.Unit {
	f.t.Helper()
	ctx := context.Background()
	idem := idempotency.New(f.st, nil, f.clock.Now, time.Minute)
	claim, _, err := idem.Claim(ctx, "key_scope", "idem-"+f.t.Name(), "fp")
	if err != nil {
		f.t.Fatal(err)
	}
	u := &idempotency.Unit{}
	publish(idempotency.WithUnit(ctx, u))
	if !commit {
		if err := idem.Abandon(ctx, claim); err != nil {
			f.t.Fatal(err)
		}
		return u
	}
	if err := idem.CompleteUnit(ctx, claim, idempotency.Response{Status: 201}, u); err != nil {
		f.t.Fatal(err)
	}
	return u
}

// sweep runs the outbox sweep over everything recorded until now.
func (f *fixture) sweep() int {
	f.t.Helper()
	n, err := f.repo.SweepOutbox(context.Background(), f.clock.Now().Add(time.Second))
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// handleQueued hands every queued message to w, one at a time, and deletes
// the ones it is done with.
func (f *fixture) handleQueued(w *webhooks.Worker) {
	f.t.Helper()
	ctx := context.Background()
	for {
		ms, err := f.q.Receive(ctx, 10, time.Minute, 0)
		if err != nil {
			f.t.Fatal(err)
		}
		if len(ms) == 0 {
			return
		}
		for _, m := range ms {
			if err := w.Handle(ctx, m); err != nil {
				f.t.Fatalf("handle: %v", err)
			}
			_ = f.q.Delete(ctx, m.Receipt)
		}
	}
}

// An event published in a unit exists exactly when the unit committed: a
// process killed between the commit and the fan-out leaves it in the
// outbox, and the sweep delivers it once however often it runs.
func TestAnEventCommittedBeforeACrashIsDeliveredExactlyOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		rc := newReceiver(t)
		w, _ := f.loopbackHook(f.root, rc)
		f.inUnit(true, func(ctx context.Context) {
			if err := f.repo.Publish(ctx, f.account(), "", "file.created", map[string]string{"id": "fil_1"}); err != nil {
				t.Fatal(err)
			}
		}) // killed: Committed never runs
		if n := len(f.outbox()); n != 1 {
			t.Fatalf("%d events in the outbox after the commit; want 1", n)
		}
		if ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: w.ID}); len(ds) != 0 {
			t.Fatalf("%d deliveries before any fan-out", len(ds))
		}
		if n := f.sweep(); n != 1 {
			t.Fatalf("the sweep dispatched %d events; want 1", n)
		}
		if n := f.sweep(); n != 0 {
			t.Fatalf("a second sweep dispatched %d events; want 0", n)
		}
		f.handleQueued(f.worker(workerOpts{allowPrivate: true}))
		ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: w.ID})
		if len(ds) != 1 || ds[0].Event != "file.created" || ds[0].Status != webhooks.DeliveryDelivered {
			t.Fatalf("deliveries %+v; want one delivered file.created", ds)
		}
		if got := rc.requests(); len(got) != 1 {
			t.Fatalf("the receiver got %d requests; want 1", len(got))
		}
		if n := len(f.outbox()); n != 0 {
			t.Fatalf("%d events left in the outbox", n)
		}
	})
}

// A request that fails stores no response and commits none of its unit's
// writes: its event is never announced.
func TestAnEventOfAnUncommittedUnitIsNeverDelivered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		w, _ := f.create(as(f.root, ""), publicHost, "*")
		f.inUnit(false, func(ctx context.Context) {
			if err := f.repo.Publish(ctx, f.account(), "", "file.created", map[string]string{"id": "fil_1"}); err != nil {
				t.Fatal(err)
			}
		})
		if n := f.sweep(); n != 0 || len(f.outbox()) != 0 {
			t.Fatalf("the sweep dispatched %d events of an abandoned request", n)
		}
		if ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: w.ID}); len(ds) != 0 {
			t.Fatalf("%d deliveries of an abandoned request", len(ds))
		}
	})
}

// The fan-out names each delivery by its event and webhook: one repeated
// (the process died after fanning out, before taking the event off the
// outbox) records no second delivery, and the receiver hears the event
// once.
func TestAFanOutRepeatedCreatesNoSecondDelivery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		rc, rcOther := newReceiver(t), newReceiver(t)
		w, _ := f.loopbackHook(f.root, rc)
		other, _ := f.loopbackHook(f.root, rcOther)
		u := f.inUnit(true, func(ctx context.Context) {
			if err := f.repo.Publish(ctx, f.account(), "", "file.created", map[string]string{"id": "fil_1"}); err != nil {
				t.Fatal(err)
			}
		})
		left := f.outbox()
		u.Committed()
		for _, it := range left { // the delete of the outbox item never happened
			if err := f.st.Put(context.Background(), it); err != nil {
				t.Fatal(err)
			}
		}
		if n := f.sweep(); n != 1 {
			t.Fatalf("the sweep dispatched %d events; want 1", n)
		}
		f.handleQueued(f.worker(workerOpts{allowPrivate: true}))
		for _, hook := range []string{w.ID, other.ID} {
			if ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: hook}); len(ds) != 1 {
				t.Fatalf("webhook %s has %d deliveries; want 1", hook, len(ds))
			}
		}
		for _, r := range []*receiver{rc, rcOther} {
			if got := r.requests(); len(got) != 1 {
				t.Fatalf("a receiver got %d requests; want 1", len(got))
			}
		}
	})
}

// Outside a unit, an idempotent call records each event once: the retry of
// a call that died after publishing but before its response was stored
// publishes nothing twice, while a call's different events all go out.
func TestARetriedCallRecordsItsEventOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		w, _ := f.create(as(f.root, ""), publicHost, "*")
		call := webhooks.WithCallID(context.Background(), "call-1")
		for _, data := range []string{"a", "a", "b"} {
			if err := f.repo.Publish(call, f.account(), "", "service.invoked", map[string]string{"serviceId": data}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.repo.Publish(webhooks.WithCallID(context.Background(), "call-2"), f.account(), "", "service.invoked", map[string]string{"serviceId": "a"}); err != nil {
			t.Fatal(err)
		}
		if ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: w.ID}); len(ds) != 3 {
			t.Fatalf("%d deliveries; want 3 (a and b of call-1, a of call-2)", len(ds))
		}
		if n := len(f.outbox()); n != 0 {
			t.Fatalf("%d events left in the outbox", n)
		}
	})
}
