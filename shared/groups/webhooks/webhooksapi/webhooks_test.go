package webhooksapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/work"
	"platformapi/shared/base/apitime"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/harness/apitest"
)

// deliveries lists the deliveries key sees with the query.
func deliveries(e *apitest.Env, key, query string) []map[string]any {
	e.T.Helper()
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhook-deliveries?limit=100&" + query, Key: key}), 200)
	var out []map[string]any
	for _, d := range r.Body["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// waitDelivered polls until the webhook has n delivered deliveries.
func waitDelivered(e *apitest.Env, key, webhookID string, n int) []map[string]any {
	e.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds := deliveries(e, key, "webhookId="+webhookID+"&status=delivered")
		if len(ds) >= n {
			return ds
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("%d of %d deliveries to %s delivered: %v", len(ds), n, webhookID, deliveries(e, key, "webhookId="+webhookID))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hookReceiver records what a webhook endpoint on loopback receives.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []*http.Request
	raw [][]byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got, rc.raw = append(rc.got, r), append(rc.raw, b)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) requests() ([]*http.Request, [][]byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*http.Request{}, rc.got...), append([][]byte{}, rc.raw...)
}

// createHook creates a webhook for every event at url.
func createHook(e *apitest.Env, key, url string) *apitest.Resp {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: key, Idem: apitest.Idem(),
		Body: map[string]any{"url": url, "events": []string{"*"}, "description": "test"}}), 201)
}

// A webhook's life through the API: created with its secret, its own
// webhook.created event delivered signed, listed as delivered, replayed as
// a new delivery of the same event.
func TestWebhookReceivesSignedEventsAndReplays(t *testing.T) {
	for _, b := range apitest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := apitest.NewOn(t, b, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
			e.StartWorker(work.Webhooks.Consumer)
			root, rootRec := e.RootKey(1, nil)
			rc := newHookReceiver(t)
			created := createHook(e, root, rc.URL+"/in")
			id, secret := created.Str("id"), created.Str("secret")
			if !strings.HasPrefix(id, "whk_") || !strings.HasPrefix(secret, "whsec_") || created.Str("status") != "active" ||
				created.Str("createdByKeyId") != rootRec.Str("id") || created.Body["projectId"] != nil || created.Str("url") != rc.URL+"/in" {
				t.Fatalf("created %s", created.Raw)
			}
			first := waitDelivered(e, root, id, 1)[0]
			reqs, bodies := rc.requests()
			if len(reqs) != 1 || reqs[0].Header.Get("X-Service-Event") != "webhook.created" || reqs[0].Header.Get("X-Service-Delivery-Id") != first["id"] {
				t.Fatalf("received %v", reqs)
			}
			if err := webhooks.Verify(reqs[0].Header.Get("X-Service-Signature"), bodies[0], secret, e.Clock.Now()); err != nil {
				t.Fatalf("signature: %v", err)
			}
			if !strings.Contains(string(bodies[0]), `"type":"webhook.created"`) || strings.Contains(string(bodies[0]), secret) {
				t.Fatalf("payload %s", bodies[0])
			}

			replay := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhook-deliveries/" + first["id"].(string) + "/replay", Key: root, Idem: apitest.Idem()}), 201)
			if replay.Str("replayOf") != first["id"] || replay.Str("eventId") != first["eventId"] || replay.Str("id") == first["id"] {
				t.Fatalf("replay %s of %v", replay.Raw, first)
			}
			waitDelivered(e, root, id, 2)
			_, bodies = rc.requests()
			if len(bodies) != 2 || string(bodies[0]) != string(bodies[1]) {
				t.Fatalf("the replay sent another body:\n%s\n%s", bodies[0], bodies[len(bodies)-1])
			}
		})
	}
}

// The signing secret appears in the create and rotate responses only.
func TestWebhookSecretIsShownOnlyOnCreateAndRotate(t *testing.T) {
	e := apitest.New(t, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
	root, _ := e.RootKey(1, nil)
	created := createHook(e, root, "https://93.184.216.34/in")
	id, secret := created.Str("id"), created.Str("secret")
	for _, r := range []*apitest.Resp{
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhooks", Key: root}), 200),
		e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + id, Key: root, Idem: apitest.Idem(), Body: map[string]any{"description": "x"}}), 200),
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/webhooks/" + id, Key: root, Idem: apitest.Idem()}), 200),
	} {
		if strings.Contains(string(r.Raw), "whsec_") || strings.Contains(string(r.Raw), `"secret"`) {
			t.Fatalf("a secret leaked: %s", r.Raw)
		}
	}
	rot := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks/" + id + "/rotate-secret", Key: root, Idem: apitest.Idem()}), 200)
	if s := rot.Str("secret"); !strings.HasPrefix(s, "whsec_") || s == secret || rot.Str("previousSecretExpiresAt") != apitime.Format(e.Clock.Now().Add(24*time.Hour)) {
		t.Fatalf("rotate %s", rot.Raw)
	}
	if strings.Contains(e.Logs.String(), secret) || strings.Contains(e.Logs.String(), rot.Str("secret")) {
		t.Fatal("a signing secret is in the logs")
	}
}

// A key manages the webhooks it or its descendants created;
// everything else is 404, never 403.
func TestWebhooksAreManagedByTheirCreatorAndItsAncestorsOnly(t *testing.T) {
	e := apitest.New(t, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
	root, _ := e.RootKey(1, nil)
	a, _ := e.Child(root, map[string]any{"label": "a"})
	a1, _ := e.Child(a, map[string]any{"label": "a1"})
	b, _ := e.Child(root, map[string]any{"label": "b"})
	id := createHook(e, a, "https://93.184.216.34/in").Str("id")
	for _, tc := range []struct {
		name    string
		key     string
		manages bool
	}{{"Creator", a, true}, {"Ancestor", root, true}, {"Descendant", a1, false}, {"Sibling", b, false}} {
		t.Run(tc.name, func(t *testing.T) {
			list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhooks", Key: tc.key}), 200)
			if listed := strings.Contains(string(list.Raw), id); listed != tc.manages {
				t.Fatalf("listed = %v: %s", listed, list.Raw)
			}
			if ds := deliveries(e, tc.key, "webhookId="+id); (len(ds) > 0) != tc.manages {
				t.Fatalf("%d deliveries visible", len(ds))
			}
			if tc.manages {
				return
			}
			e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + id, Key: tc.key, Idem: apitest.Idem(), Body: map[string]any{"description": "x"}}), 404, "not_found")
			e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks/" + id + "/rotate-secret", Key: tc.key, Idem: apitest.Idem()}), 404, "not_found")
			e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/webhooks/" + id, Key: tc.key, Idem: apitest.Idem()}), 404, "not_found")
		})
	}
}

func TestWebhookRequestsAreValidated(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	root, _ := e.RootKey(1, nil)
	for _, tc := range []struct {
		name string
		body map[string]any
		ok   bool
	}{
		{"PublicHTTPSIsAccepted", map[string]any{"url": "https://93.184.216.34/in", "events": []string{"project.created", "api_key.revoked"}}, true},
		{"HTTPIsRefused", map[string]any{"url": "http://93.184.216.34/in", "events": []string{"*"}}, false},
		{"LoopbackIsRefused", map[string]any{"url": "https://127.0.0.1/in", "events": []string{"*"}}, false},
		{"MetadataServiceIsRefused", map[string]any{"url": "https://169.254.169.254/", "events": []string{"*"}}, false},
		{"UserinfoIsRefused", map[string]any{"url": "https://u:p@93.184.216.34/in", "events": []string{"*"}}, false},
		{"UnknownEventIsRefused", map[string]any{"url": "https://93.184.216.34/in", "events": []string{"project.exploded"}}, false},
		{"NoEventIsRefused", map[string]any{"url": "https://93.184.216.34/in", "events": []string{}}, false},
		{"MissingURLIsRefused", map[string]any{"events": []string{"*"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Idem: apitest.Idem(), Body: tc.body})
			if tc.ok {
				e.Must(r, 201)
				return
			}
			e.Must(r, 400, "validation_failed")
		})
	}
}

// DELETE disables (the record stays listed), a disabled webhook cannot be
// replayed to, and PATCH can enable it again.
func TestDeletingAWebhookDisablesIt(t *testing.T) {
	e := apitest.New(t, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
	e.StartWorker(work.Webhooks.Consumer)
	root, _ := e.RootKey(1, nil)
	id := createHook(e, root, newHookReceiver(t).URL).Str("id")
	first := waitDelivered(e, root, id, 1)[0]["id"].(string)
	off := e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/webhooks/" + id, Key: root, Idem: apitest.Idem()}), 200)
	if off.Str("status") != "disabled" || off.Str("disabledAt") == "" {
		t.Fatalf("disabled %s", off.Raw)
	}
	if list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/webhooks", Key: root}), 200); !strings.Contains(string(list.Raw), `"status":"disabled"`) {
		t.Fatalf("list %s", list.Raw)
	}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhook-deliveries/" + first + "/replay", Key: root, Idem: apitest.Idem()}), 409, "conflict")
	on := e.Must(e.Do(apitest.Req{Method: "PATCH", Path: "/v1/webhooks/" + id, Key: root, Idem: apitest.Idem(), Body: map[string]any{"status": "active"}}), 200)
	if on.Str("status") != "active" || on.Body["disabledAt"] != nil {
		t.Fatalf("enabled %s", on.Raw)
	}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhook-deliveries/" + first + "/replay", Key: root, Idem: apitest.Idem()}), 201)
}

// After its creator key is revoked a webhook receives no
// new event, although other webhooks of the account still do.
func TestRevokingTheCreatorKeyStopsItsWebhook(t *testing.T) {
	for _, b := range apitest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := apitest.NewOn(t, b, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
			e.StartWorker(work.Webhooks.Consumer)
			root, _ := e.RootKey(1, nil)
			a, aRec := e.Child(root, map[string]any{"label": "a"})
			rcA, rcRoot := newHookReceiver(t), newHookReceiver(t)
			hookA := createHook(e, a, rcA.URL).Str("id")
			waitDelivered(e, root, hookA, 1)
			e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + aRec.Str("id"), Key: root, Idem: apitest.Idem()}), 200)
			hookRoot := createHook(e, root, rcRoot.URL).Str("id") // publishes webhook.created to the account
			waitDelivered(e, root, hookRoot, 1)
			if ds := deliveries(e, root, "webhookId="+hookA); len(ds) != 1 {
				t.Fatalf("the revoked key's webhook got %d deliveries, want only the one before revocation", len(ds))
			}
			if reqs, _ := rcA.requests(); len(reqs) != 1 {
				t.Fatalf("the revoked key's receiver got %d requests", len(reqs))
			}
		})
	}
}

// Without the development switch a loopback receiver is refused at creation.
func TestLoopbackReceiversNeedTheDevelopmentSwitch(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	root, _ := e.RootKey(1, nil)
	url := strings.Replace(newHookReceiver(t).URL, "http://", "https://", 1)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Idem: apitest.Idem(), Body: map[string]any{"url": url, "events": []string{"*"}}}), 400, "validation_failed")
}

// The OpenAPI document lists the event catalogue, so it cannot drift.
func TestOpenAPIListsTheEventCatalogue(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	doc := string(e.Must(e.Do(apitest.Req{Method: "GET", Path: "/openapi.json"}), 200).Raw)
	for _, ev := range webhooks.Catalogue {
		if !strings.Contains(doc, `"`+ev.Name+`"`) {
			t.Errorf("event %s is not in the OpenAPI document", ev.Name)
		}
	}
}
