package webhooks_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/webhooks"
)

// publishedTo publishes one event and returns the webhook ids that got a
// delivery, checking each has exactly one queue message.
func (f *fixture) publishedTo(project, event string) []string {
	f.t.Helper()
	if err := f.repo.Publish(context.Background(), f.account(), project, event, map[string]string{"k": "v"}); err != nil {
		f.t.Fatal(err)
	}
	msgs := queued(f.t, f.q)
	var ids []string
	for _, m := range msgs {
		var body struct{ AccountID, DeliveryID string }
		if err := json.Unmarshal([]byte(m), &body); err != nil || body.AccountID != f.account() {
			f.t.Fatalf("message %s", m)
		}
		for _, d := range f.deliveries(webhooks.DeliveryFilter{}) {
			if d.ID == body.DeliveryID {
				ids = append(ids, d.WebhookID)
			}
		}
	}
	if len(ids) != len(msgs) {
		f.t.Fatalf("%d messages for %d deliveries", len(msgs), len(ids))
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string { slices.Sort(ids); return ids }

func TestPublishReachesActiveSubscribedWebhooksInScope(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		c := as(f.root, "")
		all, _ := f.create(c, publicHost, "*")
		created, _ := f.create(c, publicHost, "project.created")
		f.create(c, publicHost, "project.updated")
		off, _ := f.create(c, publicHost, "*")
		if _, err := f.repo.Disable(context.Background(), c, off.ID); err != nil {
			t.Fatal(err)
		}
		inA, _ := f.create(as(f.root, "prj_a"), publicHost, "*")
		for _, tc := range []struct {
			name, project, event string
			want                 []string
		}{
			{"AccountEventSkipsProjectWebhooks", "", "project.created", sorted(all.ID, created.ID)},
			{"ProjectEventReachesItsProjectAndAccountWebhooks", "prj_a", "project.created", sorted(all.ID, created.ID, inA.ID)},
			{"OtherProjectsWebhooksGetNothing", "prj_b", "file.created", sorted(all.ID)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := f.publishedTo(tc.project, tc.event); !slices.Equal(got, tc.want) {
					t.Fatalf("delivered to %v, want %v", got, tc.want)
				}
			})
		}
	})
}

// The delivery carries the documented envelope and starts pending.
func TestDeliveryCarriesTheEventEnvelope(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		w, _ := f.create(as(f.root, ""), publicHost, "*")
		if err := f.repo.Publish(context.Background(), f.account(), "prj_a", "project.created", map[string]string{"id": "prj_a"}); err != nil {
			t.Fatal(err)
		}
		ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: w.ID})
		if len(ds) != 1 {
			t.Fatalf("%d deliveries", len(ds))
		}
		d := ds[0]
		var p webhooks.Payload
		if err := json.Unmarshal(d.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if d.Status != webhooks.DeliveryPending || d.Attempts != 0 || d.Event != "project.created" ||
			p.ID != d.EventID || p.Type != d.Event || p.AccountID != f.account() || p.ProjectID == nil || *p.ProjectID != "prj_a" ||
			string(p.Data) != `{"id":"prj_a"}` || p.CreatedAt.IsZero() {
			t.Fatalf("delivery %+v payload %s", d, d.Payload)
		}
	})
}

// Revoking a key stops the webhooks created under its
// authority, whether the creator or an ancestor is revoked.
func TestRevokedCreatorGetsNoDelivery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		revoke    func(a, a1, b []*keys.Key) []*keys.Key
		delivered bool
	}{
		{"CreatorRevoked", func(a, a1, b []*keys.Key) []*keys.Key { return a1 }, false},
		{"AncestorRevoked", func(a, a1, b []*keys.Key) []*keys.Key { return a }, false},
		{"SiblingRevoked", func(a, a1, b []*keys.Key) []*keys.Key { return b }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, f *fixture) {
				a := f.child(f.root, keys.CreateKeyRequest{Label: "a"})
				a1 := f.child(a, keys.CreateKeyRequest{Label: "a1"})
				b := f.child(f.root, keys.CreateKeyRequest{Label: "b"})
				w, _ := f.create(as(a1, ""), publicHost, "*")
				target := tc.revoke(a, a1, b)
				if _, err := f.keys.Revoke(context.Background(), f.root[0], target[len(target)-1].ID); err != nil {
					t.Fatal(err)
				}
				got := f.publishedTo("", "project.created")
				if tc.delivered != slices.Contains(got, w.ID) {
					t.Fatalf("delivered to %v", got)
				}
			})
		})
	}
}

func TestExpiredCreatorGetsNoDelivery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		exp := f.clock.Now().Add(time.Hour)
		a := f.child(f.root, keys.CreateKeyRequest{Label: "a", ExpiresAt: &exp})
		w, _ := f.create(as(a, ""), publicHost, "*")
		if got := f.publishedTo("", "project.created"); !slices.Equal(got, []string{w.ID}) {
			t.Fatalf("before expiry delivered to %v", got)
		}
		f.clock.Advance(time.Hour)
		if got := f.publishedTo("", "project.created"); len(got) != 0 {
			t.Fatalf("after expiry delivered to %v", got)
		}
	})
}

func TestPublishWithoutAQueueDoesNothing(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	f.create(as(f.root, ""), publicHost, "*")
	noQueue := webhooks.NewRepo(webhooks.Config{Store: f.st, Sealer: f.sealer, Now: f.clock.Now})
	if err := noQueue.Publish(context.Background(), f.account(), "", "project.created", nil); err != nil {
		t.Fatal(err)
	}
	if ds := f.deliveries(webhooks.DeliveryFilter{}); len(ds) != 0 {
		t.Fatalf("%d deliveries without a queue", len(ds))
	}
}

func TestPublishingAnEventOutsideTheCatalogueFails(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	f.create(as(f.root, ""), publicHost, "*")
	if err := f.repo.Publish(context.Background(), f.account(), "", "project.exploded", nil); err == nil {
		t.Fatal("an unknown event was published")
	}
}

// A replay is a new delivery of the same event: same payload and event id,
// a new delivery id, replayOf pointing at the original, queued again.
func TestReplayQueuesTheSameEventAgain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		a := f.child(f.root, keys.CreateKeyRequest{Label: "a"})
		b := f.child(f.root, keys.CreateKeyRequest{Label: "b"})
		w, _ := f.create(as(a, ""), publicHost, "*")
		f.publishedTo("", "project.created")
		orig := f.deliveries(webhooks.DeliveryFilter{})[0]

		r, err := f.repo.Replay(ctx, as(a, ""), orig.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.ID == orig.ID || r.EventID != orig.EventID || string(r.Payload) != string(orig.Payload) || r.ReplayOf == nil || *r.ReplayOf != orig.ID || r.Status != webhooks.DeliveryPending {
			t.Fatalf("replay %+v of %+v", r, orig)
		}
		if msgs := queued(t, f.q); len(msgs) != 1 {
			t.Fatalf("%d messages after a replay", len(msgs))
		}
		if _, err := f.repo.Replay(ctx, as(b, ""), orig.ID); code(err) != apierr.NotFound {
			t.Fatalf("a sibling replayed: %v", err)
		}
		if _, err := f.repo.Disable(ctx, as(a, ""), w.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.repo.Replay(ctx, as(a, ""), orig.ID); code(err) != apierr.Conflict {
			t.Fatalf("replay to a disabled webhook: %v", err)
		}
	})
}

func TestDeliveriesFilterByWebhookAndStatus(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		c := as(f.root, "")
		w1, _ := f.create(c, publicHost, "*")
		w2, _ := f.create(c, publicHost, "*")
		f.publishedTo("", "project.created")
		f.clock.Advance(time.Second)
		f.publishedTo("", "project.updated")
		for _, tc := range []struct {
			name   string
			filter webhooks.DeliveryFilter
			want   int
		}{
			{"All", webhooks.DeliveryFilter{}, 4},
			{"OneWebhook", webhooks.DeliveryFilter{WebhookID: w1.ID}, 2},
			{"Pending", webhooks.DeliveryFilter{Status: webhooks.DeliveryPending}, 4},
			{"Delivered", webhooks.DeliveryFilter{Status: webhooks.DeliveryDelivered}, 0},
			{"UnknownWebhook", webhooks.DeliveryFilter{WebhookID: "whk_x"}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := f.deliveries(tc.filter); len(got) != tc.want {
					t.Fatalf("%d deliveries, want %d", len(got), tc.want)
				}
			})
		}
		// Pages of one, newest first, cover everything once.
		var seen []string
		cursor := ""
		for {
			page, next, err := f.repo.ListDeliveries(context.Background(), c, webhooks.DeliveryFilter{WebhookID: w2.ID}, 1, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page {
				seen = append(seen, d.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if len(seen) != 2 || seen[0] < seen[1] {
			t.Fatalf("paged %v, want two newest first", seen)
		}
	})
}
