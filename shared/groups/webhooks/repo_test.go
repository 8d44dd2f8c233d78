package webhooks_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/webhooks"
)

func code(err error) apierr.Code {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// The secret is stored only sealed, bound to its webhook: the record holds
// no plaintext, and the ciphertext does not open for another webhook.
func TestSecretIsStoredSealedAndBoundToItsWebhook(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		w, secret := f.create(as(f.root, ""), publicHost, "*")
		it, err := f.st.Get(ctx, store.Key{PK: "acct#" + f.account(), SK: "whk#" + w.ID})
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range it {
			if b, ok := v.([]byte); ok && bytes.Contains(b, []byte(secret)) || v == secret {
				t.Fatalf("attribute %s holds the secret in the clear", name)
			}
		}
		if got, err := f.sealer.Open(ctx, it.Bytes("secret"), []byte(w.ID)); err != nil || string(got) != secret {
			t.Fatalf("sealed secret opens to %q, %v", got, err)
		}
		if _, err := f.sealer.Open(ctx, it.Bytes("secret"), []byte("whk_other")); err == nil {
			t.Fatal("the sealed secret opened for another webhook")
		}
	})
}

// Webhooks manageable by a key: the creator and its ancestors
// manage a webhook; descendants and siblings get not_found.
func TestOnlyTheCreatorAndItsAncestorsManageAWebhook(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		a := f.child(f.root, keys.CreateKeyRequest{Label: "a"})
		a1 := f.child(a, keys.CreateKeyRequest{Label: "a1"})
		b := f.child(f.root, keys.CreateKeyRequest{Label: "b"})
		w, _ := f.create(as(a, ""), publicHost, "*")
		for _, tc := range []struct {
			name    string
			chain   []*keys.Key
			manages bool
		}{
			{"Creator", a, true},
			{"Ancestor", f.root, true},
			{"Descendant", a1, false},
			{"Sibling", b, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := as(tc.chain, "")
				_, err := f.repo.Get(ctx, c, w.ID)
				list, _, lerr := f.repo.List(ctx, c, 100, "")
				if lerr != nil {
					t.Fatal(lerr)
				}
				listed := slices.ContainsFunc(list, func(x *webhooks.Webhook) bool { return x.ID == w.ID })
				if tc.manages != (err == nil) || tc.manages != listed {
					t.Fatalf("get %v, listed %v", err, listed)
				}
				if !tc.manages {
					if code(err) != apierr.NotFound {
						t.Fatalf("get: %v, want not_found", err)
					}
					if _, err := f.repo.Disable(ctx, c, w.ID); code(err) != apierr.NotFound {
						t.Fatalf("disable: %v, want not_found", err)
					}
				}
			})
		}
	})
}

// A webhook made in a project scope gets that project; a caller scoped to
// another project does not see it.
func TestProjectScopeBindsAndHidesWebhooks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		w, _ := f.create(as(f.root, "prj_a"), publicHost, "*")
		if w.ProjectID == nil || *w.ProjectID != "prj_a" {
			t.Fatalf("projectId = %v", w.ProjectID)
		}
		if _, err := f.repo.Get(ctx, as(f.root, "prj_b"), w.ID); code(err) != apierr.NotFound {
			t.Fatalf("other project: %v", err)
		}
		for _, scope := range []string{"prj_a", ""} {
			if _, err := f.repo.Get(ctx, as(f.root, scope), w.ID); err != nil {
				t.Fatalf("scope %q: %v", scope, err)
			}
		}
	})
}

func TestEventSubscriptionsAreValidatedAndNormalised(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			in   []string
			want []string
		}{
			{"DuplicatesCollapse", []string{"project.created", "project.created"}, []string{"project.created"}},
			{"WildcardWinsOverNames", []string{"project.created", "*"}, []string{"*"}},
			{"UnknownEventIsRefused", []string{"project.exploded"}, nil},
			{"NoEventIsRefused", []string{}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w, _, err := f.repo.Create(ctx, as(f.root, ""), webhooks.CreateRequest{URL: publicHost, Events: tc.in})
				if tc.want == nil {
					if code(err) != apierr.ValidationFailed {
						t.Fatalf("err = %v, want validation_failed", err)
					}
					return
				}
				if err != nil || !slices.Equal(w.Events, tc.want) {
					t.Fatalf("events = %v, %v; want %v", w, err, tc.want)
				}
			})
		}
	})
}

// DELETE is a soft disable: the record and its deliveries stay readable.
func TestDisableKeepsTheWebhookAndCanBeUndone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := as(f.root, "")
		w, _ := f.create(c, publicHost, "*")
		d, err := f.repo.Disable(ctx, c, w.ID)
		if err != nil || d.Status != webhooks.StatusDisabled || d.DisabledAt == nil {
			t.Fatalf("disable: %+v %v", d, err)
		}
		again, err := f.repo.Disable(ctx, c, w.ID)
		if err != nil || !again.DisabledAt.Equal(*d.DisabledAt) {
			t.Fatalf("disabling twice changed it: %+v %v", again, err)
		}
		active := webhooks.StatusActive
		e, err := f.repo.Update(ctx, c, w.ID, webhooks.UpdateRequest{Status: &active})
		if err != nil || e.Status != webhooks.StatusActive || e.DisabledAt != nil {
			t.Fatalf("enable: %+v %v", e, err)
		}
	})
}

func TestUpdateChangesOnlyWhatIsSentAndChecksTheURL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		c := as(f.root, "")
		w, _ := f.create(c, publicHost, "project.created")
		desc := "orders"
		u, err := f.repo.Update(ctx, c, w.ID, webhooks.UpdateRequest{Description: &desc, Events: []string{"project.updated"}})
		if err != nil || u.Description != desc || u.URL != publicHost || !slices.Equal(u.Events, []string{"project.updated"}) {
			t.Fatalf("update: %+v %v", u, err)
		}
		private := "https://10.0.0.1/in"
		if _, err := f.repo.Update(ctx, c, w.ID, webhooks.UpdateRequest{URL: &private}); code(err) != apierr.ValidationFailed {
			t.Fatalf("private URL: %v", err)
		}
		got, _ := f.repo.Get(ctx, c, w.ID)
		if got.URL != publicHost {
			t.Fatalf("a refused update changed the URL to %s", got.URL)
		}
	})
}

// A webhook beyond the account's limit of active webhooks is refused.
func TestActiveWebhooksPerAccountAreBounded(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	c := as(f.root, "")
	var first *webhooks.Webhook
	for i := range webhooks.MaxActivePerAccount {
		w, _ := f.create(c, publicHost, "*")
		if i == 0 {
			first = w
		}
	}
	if _, _, err := f.repo.Create(context.Background(), c, webhooks.CreateRequest{URL: publicHost, Events: []string{"*"}}); code(err) != apierr.Conflict {
		t.Fatalf("one more: %v, want conflict", err)
	}
	if _, err := f.repo.Disable(context.Background(), c, first.ID); err != nil {
		t.Fatal(err)
	}
	f.create(c, publicHost, "*")
}
