package httpapi_test

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/credittoken"
	"platformapi/shared/envelope/localkey"
	"platformapi/shared/httpapi"
	"platformapi/shared/queue/memqueue"
	"platformapi/shared/store/teststores"
	"platformapi/shared/webhooks"
)

// hookEnv is an API server with a webhook queue and a sealer, and the
// worker that drains the queue.
type hookEnv struct {
	*env
	worker *webhooks.Worker
}

// newHookEnvOn builds the server as env_test.go does, plus webhooks.
// allowPrivate is the development switch, needed to reach the loopback
// receivers of these tests.
func newHookEnvOn(t *testing.T, b teststores.Backend, allowPrivate bool) *hookEnv {
	t.Helper()
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	signer, err := credittoken.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := localkey.Open(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	q := memqueue.New(memqueue.WithDeadLetter(memqueue.New(), 3))
	t.Cleanup(func() { q.Close() })
	st := b.Open(t, c.Now)
	logs := &syncBuffer{}
	srv, err := httpapi.New(httpapi.Deps{
		Store: st, CreditTokens: signer, Now: c.Now, Backend: b.Name,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), RequestTimeout: 10 * time.Second,
		WebhookQueue: q, Sealer: sealer, AllowPrivateWebhooks: allowPrivate,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	w := webhooks.NewWorker(webhooks.WorkerConfig{
		Config:      webhooks.Config{Store: st, Sealer: sealer, Queue: q, Now: c.Now, Guard: webhooks.Guard{AllowPrivate: allowPrivate}},
		MaxAttempts: 3, Backoff: func(int) time.Duration { return 10 * time.Millisecond }, Timeout: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	return &hookEnv{env: &env{t: t, url: hs.URL, clock: c, store: st, signer: signer, srv: srv, logs: logs}, worker: w}
}

// run drains the webhook queue until the test ends.
func (e *hookEnv) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.worker.Run(ctx); close(done) }()
	e.t.Cleanup(func() { cancel(); <-done })
}

// deliveries lists the deliveries key sees with the query.
func (e *hookEnv) deliveries(key, query string) []map[string]any {
	e.t.Helper()
	r := e.must(e.do(req{method: "GET", path: "/v1/webhook-deliveries?limit=100&" + query, key: key}), 200)
	var out []map[string]any
	for _, d := range r.body["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// waitDelivered polls until the webhook has n delivered deliveries.
func (e *hookEnv) waitDelivered(key, webhookID string, n int) []map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds := e.deliveries(key, "webhookId="+webhookID+"&status=delivered")
		if len(ds) >= n {
			return ds
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d of %d deliveries to %s delivered: %v", len(ds), n, webhookID, e.deliveries(key, "webhookId="+webhookID))
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
func (e *hookEnv) createHook(key, url string) *resp {
	e.t.Helper()
	return e.must(e.do(req{method: "POST", path: "/v1/webhooks", key: key, idem: idem(),
		body: map[string]any{"url": url, "events": []string{"*"}, "description": "test"}}), 201)
}

// A webhook's life through the API: created with its secret, its own
// webhook.created event delivered signed, listed as delivered, replayed as
// a new delivery of the same event.
func TestWebhookReceivesSignedEventsAndReplays(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newHookEnvOn(t, b, true)
			e.run()
			root, rootRec := e.rootKey(1, nil)
			rc := newHookReceiver(t)
			created := e.createHook(root, rc.URL+"/in")
			id, secret := created.str("id"), created.str("secret")
			if !strings.HasPrefix(id, "whk_") || !strings.HasPrefix(secret, "whsec_") || created.str("status") != "active" ||
				created.str("createdByKeyId") != rootRec.str("id") || created.body["projectId"] != nil || created.str("url") != rc.URL+"/in" {
				t.Fatalf("created %s", created.raw)
			}
			first := e.waitDelivered(root, id, 1)[0]
			reqs, bodies := rc.requests()
			if len(reqs) != 1 || reqs[0].Header.Get("X-Service-Event") != webhooks.EventWebhookCreated || reqs[0].Header.Get("X-Service-Delivery-Id") != first["id"] {
				t.Fatalf("received %v", reqs)
			}
			if err := webhooks.Verify(reqs[0].Header.Get("X-Service-Signature"), bodies[0], secret, e.clock.Now()); err != nil {
				t.Fatalf("signature: %v", err)
			}
			if !strings.Contains(string(bodies[0]), `"type":"webhook.created"`) || strings.Contains(string(bodies[0]), secret) {
				t.Fatalf("payload %s", bodies[0])
			}

			replay := e.must(e.do(req{method: "POST", path: "/v1/webhook-deliveries/" + first["id"].(string) + "/replay", key: root, idem: idem()}), 201)
			if replay.str("replayOf") != first["id"] || replay.str("eventId") != first["eventId"] || replay.str("id") == first["id"] {
				t.Fatalf("replay %s of %v", replay.raw, first)
			}
			e.waitDelivered(root, id, 2)
			_, bodies = rc.requests()
			if len(bodies) != 2 || string(bodies[0]) != string(bodies[1]) {
				t.Fatalf("the replay sent another body:\n%s\n%s", bodies[0], bodies[len(bodies)-1])
			}
		})
	}
}

// The signing secret appears in the create and rotate responses only.
func TestWebhookSecretIsShownOnlyOnCreateAndRotate(t *testing.T) {
	e := newHookEnvOn(t, embedded, true)
	root, _ := e.rootKey(1, nil)
	created := e.createHook(root, "https://93.184.216.34/in")
	id, secret := created.str("id"), created.str("secret")
	for _, r := range []*resp{
		e.must(e.do(req{method: "GET", path: "/v1/webhooks", key: root}), 200),
		e.must(e.do(req{method: "PATCH", path: "/v1/webhooks/" + id, key: root, idem: idem(), body: map[string]any{"description": "x"}}), 200),
		e.must(e.do(req{method: "DELETE", path: "/v1/webhooks/" + id, key: root, idem: idem()}), 200),
	} {
		if strings.Contains(string(r.raw), "whsec_") || strings.Contains(string(r.raw), `"secret"`) {
			t.Fatalf("a secret leaked: %s", r.raw)
		}
	}
	rot := e.must(e.do(req{method: "POST", path: "/v1/webhooks/" + id + "/rotate-secret", key: root, idem: idem()}), 200)
	if s := rot.str("secret"); !strings.HasPrefix(s, "whsec_") || s == secret || rot.str("previousSecretExpiresAt") != e.clock.Now().Add(24*time.Hour).Format(time.RFC3339) {
		t.Fatalf("rotate %s", rot.raw)
	}
	if strings.Contains(e.logs.String(), secret) || strings.Contains(e.logs.String(), rot.str("secret")) {
		t.Fatal("a signing secret is in the logs")
	}
}

// Spec 2.2: a key manages the webhooks it or its descendants created;
// everything else is 404, never 403.
func TestWebhooksAreManagedByTheirCreatorAndItsAncestorsOnly(t *testing.T) {
	e := newHookEnvOn(t, embedded, true)
	root, _ := e.rootKey(1, nil)
	a, _ := e.child(root, map[string]any{"label": "a"})
	a1, _ := e.child(a, map[string]any{"label": "a1"})
	b, _ := e.child(root, map[string]any{"label": "b"})
	id := e.createHook(a, "https://93.184.216.34/in").str("id")
	for _, tc := range []struct {
		name    string
		key     string
		manages bool
	}{{"Creator", a, true}, {"Ancestor", root, true}, {"Descendant", a1, false}, {"Sibling", b, false}} {
		t.Run(tc.name, func(t *testing.T) {
			list := e.must(e.do(req{method: "GET", path: "/v1/webhooks", key: tc.key}), 200)
			if listed := strings.Contains(string(list.raw), id); listed != tc.manages {
				t.Fatalf("listed = %v: %s", listed, list.raw)
			}
			if ds := e.deliveries(tc.key, "webhookId="+id); (len(ds) > 0) != tc.manages {
				t.Fatalf("%d deliveries visible", len(ds))
			}
			if tc.manages {
				return
			}
			e.must(e.do(req{method: "PATCH", path: "/v1/webhooks/" + id, key: tc.key, idem: idem(), body: map[string]any{"description": "x"}}), 404, "not_found")
			e.must(e.do(req{method: "POST", path: "/v1/webhooks/" + id + "/rotate-secret", key: tc.key, idem: idem()}), 404, "not_found")
			e.must(e.do(req{method: "DELETE", path: "/v1/webhooks/" + id, key: tc.key, idem: idem()}), 404, "not_found")
		})
	}
}

func TestWebhookRequestsAreValidated(t *testing.T) {
	e := newHookEnvOn(t, embedded, false)
	root, _ := e.rootKey(1, nil)
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
			r := e.do(req{method: "POST", path: "/v1/webhooks", key: root, idem: idem(), body: tc.body})
			if tc.ok {
				e.must(r, 201)
				return
			}
			e.must(r, 400, "validation_failed")
		})
	}
}

// DELETE disables (the record stays listed), a disabled webhook cannot be
// replayed to, and PATCH can enable it again.
func TestDeletingAWebhookDisablesIt(t *testing.T) {
	e := newHookEnvOn(t, embedded, true)
	e.run()
	root, _ := e.rootKey(1, nil)
	id := e.createHook(root, newHookReceiver(t).URL).str("id")
	first := e.waitDelivered(root, id, 1)[0]["id"].(string)
	off := e.must(e.do(req{method: "DELETE", path: "/v1/webhooks/" + id, key: root, idem: idem()}), 200)
	if off.str("status") != "disabled" || off.str("disabledAt") == "" {
		t.Fatalf("disabled %s", off.raw)
	}
	if list := e.must(e.do(req{method: "GET", path: "/v1/webhooks", key: root}), 200); !strings.Contains(string(list.raw), `"status":"disabled"`) {
		t.Fatalf("list %s", list.raw)
	}
	e.must(e.do(req{method: "POST", path: "/v1/webhook-deliveries/" + first + "/replay", key: root, idem: idem()}), 409, "conflict")
	on := e.must(e.do(req{method: "PATCH", path: "/v1/webhooks/" + id, key: root, idem: idem(), body: map[string]any{"status": "active"}}), 200)
	if on.str("status") != "active" || on.body["disabledAt"] != nil {
		t.Fatalf("enabled %s", on.raw)
	}
	e.must(e.do(req{method: "POST", path: "/v1/webhook-deliveries/" + first + "/replay", key: root, idem: idem()}), 201)
}

// Spec 3 and 6.3: after its creator key is revoked a webhook receives no
// new event, although other webhooks of the account still do.
func TestRevokingTheCreatorKeyStopsItsWebhook(t *testing.T) {
	e := newHookEnvOn(t, embedded, true)
	e.run()
	root, _ := e.rootKey(1, nil)
	a, aRec := e.child(root, map[string]any{"label": "a"})
	rcA, rcRoot := newHookReceiver(t), newHookReceiver(t)
	hookA := e.createHook(a, rcA.URL).str("id")
	e.waitDelivered(root, hookA, 1)
	e.must(e.do(req{method: "DELETE", path: "/v1/api-keys/" + aRec.str("id"), key: root, idem: idem()}), 200)
	hookRoot := e.createHook(root, rcRoot.URL).str("id") // publishes webhook.created to the account
	e.waitDelivered(root, hookRoot, 1)
	if ds := e.deliveries(root, "webhookId="+hookA); len(ds) != 1 {
		t.Fatalf("the revoked key's webhook got %d deliveries, want only the one before revocation", len(ds))
	}
	if reqs, _ := rcA.requests(); len(reqs) != 1 {
		t.Fatalf("the revoked key's receiver got %d requests", len(reqs))
	}
}

// Without the development switch a loopback receiver is refused at creation.
func TestLoopbackReceiversNeedTheDevelopmentSwitch(t *testing.T) {
	e := newHookEnvOn(t, embedded, false)
	root, _ := e.rootKey(1, nil)
	url := strings.Replace(newHookReceiver(t).URL, "http://", "https://", 1)
	e.must(e.do(req{method: "POST", path: "/v1/webhooks", key: root, idem: idem(), body: map[string]any{"url": url, "events": []string{"*"}}}), 400, "validation_failed")
}

func TestWebhooksNeedASealer(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	e.must(e.do(req{method: "POST", path: "/v1/webhooks", key: root, idem: idem(),
		body: map[string]any{"url": "https://93.184.216.34/in", "events": []string{"*"}}}), 503, "service_unavailable")
}

// The OpenAPI document lists the event catalogue, so it cannot drift.
func TestOpenAPIListsTheEventCatalogue(t *testing.T) {
	e := newHookEnvOn(t, embedded, false)
	doc := string(e.must(e.do(req{method: "GET", path: "/openapi.json"}), 200).raw)
	for _, ev := range webhooks.Catalogue {
		if !strings.Contains(doc, `"`+ev.Name+`"`) {
			t.Errorf("event %s is not in the OpenAPI document", ev.Name)
		}
	}
}
