package webhooksapi_test

import (
	"slices"
	"testing"

	"platformapi/shared/adapters/work"
	"platformapi/shared/harness/apitest"
)

// hookFor creates a webhook of key for events at url and returns its id.
func hookFor(e *apitest.Env, key, url string, events ...string) string {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: key, Idem: apitest.Idem(),
		Body: map[string]any{"url": url, "events": events}}), 201).Str("id")
}

// eventsOf lists the events of the webhook's deliveries as key sees them
// in GET /webhook-deliveries, sorted.
func eventsOf(e *apitest.Env, key, webhookID string) []string {
	e.T.Helper()
	var out []string
	for _, d := range deliveries(e, key, "webhookId="+webhookID) {
		out = append(out, d["event"].(string))
	}
	slices.Sort(out)
	return out
}

// received lists the X-Service-Event of every request rc got, sorted.
func received(rc *hookReceiver) []string {
	reqs, _ := rc.requests()
	var out []string
	for _, r := range reqs {
		out = append(out, r.Header.Get("X-Service-Event"))
	}
	slices.Sort(out)
	return out
}

// A webhook subscribed to "*" receives only the events
// its creator key could read through the API right now. A key holding only
// webhook scopes hears nothing of sibling branches' keys, approvals or
// services it may not use, neither delivered nor listed; a key with
// api_keys:manage hears its own subtree's keys only;
// services:read hears only the services the key may use.
func TestAWebhookReceivesOnlyWhatItsCreatorCouldRead(t *testing.T) {
	for _, b := range apitest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := apitest.NewOn(t, b, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
			e.StartWorker(work.Webhooks.Consumer)
			root, _ := e.RootKey(1, nil)
			hooksOnly, _ := e.Child(root, map[string]any{"label": "hooks only", "scopes": []string{"webhooks:read", "webhooks:write"}, "allowedServices": []string{}})
			manager, _ := e.Child(root, map[string]any{"label": "manager", "allowedServices": []string{"core-database"},
				"scopes": []string{"webhooks:read", "webhooks:write", "api_keys:manage", "services:read"}})
			sibling, _ := e.Child(root, map[string]any{"label": "sibling branch"})

			rcRoot, rcHooks, rcManager := newHookReceiver(t), newHookReceiver(t), newHookReceiver(t)
			rootHook := hookFor(e, root, rcRoot.URL, "*")
			hooksHook := hookFor(e, hooksOnly, rcHooks.URL, "*")
			managerHook := hookFor(e, manager, rcManager.URL, "*")

			e.Child(sibling, map[string]any{"label": "in the sibling branch"}) // api_key.created, not the manager's subtree
			e.Child(manager, map[string]any{"label": "in the manager's subtree"})
			e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: root, Idem: apitest.Idem(),
				Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": map[string]any{"memoryId": "mem_01M8142SJ4P3055BQSZ1J8BYQY"}}}), 201)
			e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
				Body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "a secret plan"}}}), 200)

			wantRoot := []string{"api_key.created", "api_key.created", "approval.requested", "service.invoked",
				"webhook.created", "webhook.created", "webhook.created"}
			waitDelivered(e, root, rootHook, len(wantRoot))
			if got := eventsOf(e, root, rootHook); !slices.Equal(got, wantRoot) {
				t.Fatalf("the root key's webhook got %v, want %v", got, wantRoot)
			}
			for _, tc := range []struct {
				name, key, hook string
				rc              *hookReceiver
				want            []string
			}{
				{"HooksOnlyKeyHearsOnlyItsOwnWebhook", hooksOnly, hooksHook, rcHooks, []string{"webhook.created"}},
				{"ManagerHearsItsSubtreesKeysNotTheSiblingsNorOtherServices", manager, managerHook, rcManager,
					[]string{"api_key.created", "webhook.created"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					waitDelivered(e, tc.key, tc.hook, len(tc.want))
					if got := eventsOf(e, tc.key, tc.hook); !slices.Equal(got, tc.want) {
						t.Fatalf("listed deliveries %v, want %v", got, tc.want)
					}
					if got := eventsOf(e, root, tc.hook); !slices.Equal(got, tc.want) {
						t.Fatalf("deliveries listed to the root key %v, want %v", got, tc.want)
					}
					if got := received(tc.rc); !slices.Equal(got, tc.want) {
						t.Fatalf("received %v, want %v", got, tc.want)
					}
				})
			}
		})
	}
}

// An explicit subscription the creator key can never receive is refused at
// creation and update, each by its index; "*" is accepted and filtered.
func TestSubscriptionsTheCreatorCanNeverReceiveAreRefused(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		hooksOnly, _ := e.Child(root, map[string]any{"scopes": []string{"webhooks:read", "webhooks:write"}, "allowedServices": []string{}})
		url := newHookReceiver(t).URL
		for _, tc := range []struct {
			name   string
			events []string
			bad    []string
		}{
			{"KeyEventsWithoutApiKeysManage", []string{"webhook.created", "api_key.created"}, []string{"body.events[1]"}},
			{"ApprovalsWithoutApprovalsRead", []string{"approval.requested"}, []string{"body.events[0]"}},
			{"ServiceEventsWithoutAnyService", []string{"service.invoked", "credits.topped_up"}, []string{"body.events[0]", "body.events[1]"}},
			{"DatabaseEventsWithoutCoreDatabase", []string{"database.provisioned"}, []string{"body.events[0]"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: hooksOnly, Idem: apitest.Idem(),
					Body: map[string]any{"url": url, "events": tc.events}}), 400, "validation_failed")
				var locs []string
				for _, f := range r.Body["errors"].([]any) {
					locs = append(locs, f.(map[string]any)["location"].(string))
				}
				if !slices.Equal(locs, tc.bad) {
					t.Fatalf("refused %v, want %v: %s", locs, tc.bad, r.Raw)
				}
			})
		}
		id := hookFor(e, hooksOnly, url, "*")
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + id, Key: hooksOnly, Idem: apitest.Idem(),
			Body: map[string]any{"events": []string{"webhook.updated", "project.created"}}}), 400, "validation_failed")
		// The root key edits the webhook, but its creator's rights decide.
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + id, Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"events": []string{"file.created"}}}), 400, "validation_failed")
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + id, Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"events": []string{"webhook.updated"}}}), 200)
	}, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
}

// A webhook of a project-bound key receives only events of that project,
// though an account-level key acts in other projects and at account level.
func TestAProjectBoundCreatorHearsOnlyItsProject(t *testing.T) {
	for _, b := range apitest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := apitest.NewOn(t, b, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
			e.StartWorker(work.Webhooks.Consumer)
			root, _ := e.RootKey(1, nil)
			project := func(name string) string {
				return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": name}}), 201).Str("id")
			}
			p, q := project("p"), project("q")
			bound, _ := e.Child(root, map[string]any{"projectId": p})
			rcBound, rcRoot := newHookReceiver(t), newHookReceiver(t)
			boundHook := hookFor(e, bound, rcBound.URL, "*")
			rootHook := hookFor(e, root, rcRoot.URL, "*")
			for _, id := range []string{q, p} {
				e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/projects/" + id, Key: root, Idem: apitest.Idem(), Body: map[string]any{"description": "changed"}}), 200)
			}
			e.Child(root, map[string]any{"label": "account level"})
			// root: its own webhook.created, two project.updated, api_key.created.
			waitDelivered(e, root, rootHook, 4)
			want := []string{"project.updated", "webhook.created"}
			waitDelivered(e, bound, boundHook, len(want))
			if got := eventsOf(e, root, boundHook); !slices.Equal(got, want) {
				t.Fatalf("the bound key's webhook got %v, want %v", got, want)
			}
			if got := received(rcBound); !slices.Equal(got, want) {
				t.Fatalf("received %v, want %v", got, want)
			}
		})
	}
}
