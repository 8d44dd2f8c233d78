package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/testkit/testlog"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/emf/emftest"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/webhooks"
)

// receiver is a webhook endpoint on loopback that answers the scripted
// statuses in turn, then 200, and records every request.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	script []int
	got    []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, script ...int) *receiver {
	rc := &receiver{script: script}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: b})
		status := http.StatusOK
		if len(rc.script) > 0 {
			status, rc.script = rc.script[0], rc.script[1:]
		}
		rc.mu.Unlock()
		if status/100 == 3 {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received{}, rc.got...)
}

// loopbackHook creates, with the development switch, a webhook pointing at
// rc under chain.
func (f *fixture) loopbackHook(chain []*keys.Key, rc *receiver) (*webhooks.Webhook, string) {
	f.t.Helper()
	w, secret, err := f.newRepo(webhooks.Guard{AllowPrivate: true}).Create(context.Background(), as(chain, ""), webhooks.CreateRequest{URL: rc.URL + "/hook", Events: []string{"*"}})
	if err != nil {
		f.t.Fatal(err)
	}
	return w, secret
}

type workerOpts struct {
	allowPrivate bool
	maxAttempts  int
	backoff      func(int) time.Duration
	logs         io.Writer // default: discarded
}

func (f *fixture) worker(o workerOpts) *webhooks.Worker {
	if o.backoff == nil {
		o.backoff = func(int) time.Duration { return 10 * time.Millisecond }
	}
	if o.logs == nil {
		o.logs = io.Discard
	}
	return webhooks.NewWorker(webhooks.WorkerConfig{
		Config:      webhooks.Config{Store: f.st, Sealer: f.sealer, Queue: f.q, Guard: webhooks.Guard{AllowPrivate: o.allowPrivate}, Now: f.clock.Now},
		MaxAttempts: o.maxAttempts, Backoff: o.backoff, Timeout: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(o.logs, nil)),
	})
}

// run starts the worker loop until the test ends.
func run(t *testing.T, w *webhooks.Worker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { work.Run(ctx, slog.New(slog.DiscardHandler), []work.Worker{w.Work()}, nil); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (f *fixture) publish(event string) {
	f.t.Helper()
	if err := f.repo.Publish(context.Background(), f.account(), "", event, map[string]int{"n": 1}); err != nil {
		f.t.Fatal(err)
	}
}

// waitFor polls the only delivery of w until it has status.
func (f *fixture) waitFor(w *webhooks.Webhook, status string) *webhooks.Delivery {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds := f.deliveries(webhooks.DeliveryFilter{WebhookID: w.ID})
		if len(ds) == 1 && ds[0].Status == status {
			return ds[0]
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("deliveries %+v never reached %s", ds, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func receiveOne(t *testing.T, q queue.Queue) queue.Received {
	t.Helper()
	ms, err := q.Receive(context.Background(), 1, time.Minute, time.Second)
	if err != nil || len(ms) != 1 {
		t.Fatalf("receive: %v %v", ms, err)
	}
	return ms[0]
}

// Every delivery is signed and recorded (DESIGN invariant).
func TestDeliveryIsSignedAndRecorded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f *fixture) {
		rc := newReceiver(t)
		w, secret := f.loopbackHook(f.root, rc)
		run(t, f.worker(workerOpts{allowPrivate: true}))
		f.publish("project.created")
		d := f.waitFor(w, webhooks.DeliveryDelivered)
		if d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 200 || d.DeliveredAt == nil || d.NextAttemptAt != nil || d.LastError != nil {
			t.Fatalf("delivery %+v", d)
		}
		got := rc.requests()
		if len(got) != 1 {
			t.Fatalf("%d requests", len(got))
		}
		h := got[0].header
		if h.Get("Content-Type") != "application/json" || h.Get("X-Service-Event") != "project.created" || h.Get("X-Service-Delivery-Id") != d.ID || string(got[0].body) != string(d.Payload) {
			t.Fatalf("request %v %s", h, got[0].body)
		}
		if err := webhooks.Verify(h.Get("X-Service-Signature"), got[0].body, secret, f.clock.Now()); err != nil {
			t.Fatalf("signature: %v", err)
		}
		ts := strconv.FormatInt(f.clock.Now().Unix(), 10)
		if h.Get("webhook-id") != d.EventID || h.Get("webhook-timestamp") != ts || !strings.HasPrefix(h.Get("X-Service-Signature"), "t="+ts+",") ||
			!standardReceiverVerifies(h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), got[0].body, secret) {
			t.Fatalf("Standard Webhooks headers %v", h)
		}
	})
}

func TestFailingReceiverIsRetriedWithBackoffUntilItSucceeds(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	rc := newReceiver(t, 500, 503)
	w, _ := f.loopbackHook(f.root, rc)
	var mu sync.Mutex
	var waits []int
	run(t, f.worker(workerOpts{allowPrivate: true, maxAttempts: 3, backoff: func(n int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, n)
		return 20 * time.Millisecond
	}}))
	f.publish("project.created")
	d := f.waitFor(w, webhooks.DeliveryDelivered)
	mu.Lock()
	defer mu.Unlock()
	if d.Attempts != 3 || len(rc.requests()) != 3 || len(waits) != 2 || waits[0] != 1 || waits[1] != 2 {
		t.Fatalf("delivery %+v after %d requests, backoffs %v", d, len(rc.requests()), waits)
	}
	// webhook-id is the event's on every attempt, so a receiver that saw an
	// attempt it answered too late drops the retry.
	for _, r := range rc.requests() {
		if r.header.Get("webhook-id") != d.EventID {
			t.Fatalf("webhook-id %q on a retry, want the event id %q", r.header.Get("webhook-id"), d.EventID)
		}
	}
}

// After its last attempt a delivery is failed and its message goes to the
// dead-letter queue, through the queue's own receive limit.
func TestLastFailedAttemptFailsTheDeliveryAndDeadLettersTheMessage(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	rc := newReceiver(t, 500, 500, 500, 500, 500)
	w, _ := f.loopbackHook(f.root, rc)
	run(t, f.worker(workerOpts{allowPrivate: true, maxAttempts: 3}))
	f.publish("project.created")
	d := f.waitFor(w, webhooks.DeliveryFailed)
	if d.Attempts != 3 || *d.LastStatusCode != 500 || d.LastError == nil || !strings.Contains(*d.LastError, "500") || d.NextAttemptAt != nil {
		t.Fatalf("delivery %+v", d)
	}
	dead, err := f.dlq.Receive(context.Background(), 1, time.Minute, 5*time.Second)
	if err != nil || len(dead) != 1 || !strings.Contains(string(dead[0].Body), d.ID) {
		t.Fatalf("dead letters %v %v", dead, err)
	}
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("%d requests for 3 attempts", n)
	}
}

func TestBackoffDoublesFrom30SecondsUpToAnHour(t *testing.T) {
	for n, want := range map[int]time.Duration{
		1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 7: 32 * time.Minute, 8: time.Hour, 50: time.Hour,
	} {
		if got := webhooks.Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	rc := newReceiver(t, http.StatusFound)
	w, _ := f.loopbackHook(f.root, rc)
	f.publish("project.created")
	if err := f.worker(workerOpts{allowPrivate: true}).Handle(context.Background(), receiveOne(t, f.q)); !errors.Is(err, webhooks.ErrRetry) {
		t.Fatalf("Handle = %v, want a retry", err)
	}
	d := f.waitFor(w, webhooks.DeliveryPending)
	if *d.LastStatusCode != http.StatusFound || !strings.Contains(*d.LastError, "redirects are not followed") || len(rc.requests()) != 1 {
		t.Fatalf("delivery %+v", d)
	}
}

// Without the development switch a loopback URL is refused when the webhook
// is created and, should it resolve there later, when it is delivered.
func TestLoopbackIsRefusedAtCreationAndAtDeliveryWithoutTheSwitch(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	rc := newReceiver(t)
	https := strings.Replace(rc.URL, "http://", "https://", 1)
	for _, url := range []string{rc.URL, https, strings.Replace(https, "127.0.0.1", "[::ffff:127.0.0.1]", 1)} {
		_, _, err := f.repo.Create(context.Background(), as(f.root, ""), webhooks.CreateRequest{URL: url, Events: []string{"*"}})
		if code(err) != apierr.ValidationFailed {
			t.Fatalf("create %s: %v, want validation_failed", url, err)
		}
	}
	w, _ := f.loopbackHook(f.root, rc)
	f.publish("project.created")
	if err := f.worker(workerOpts{}).Handle(context.Background(), receiveOne(t, f.q)); !errors.Is(err, webhooks.ErrRetry) {
		t.Fatalf("Handle = %v, want a retry", err)
	}
	d := f.waitFor(w, webhooks.DeliveryPending)
	if len(rc.requests()) != 0 || d.LastStatusCode != nil || !strings.Contains(*d.LastError, "loopback") {
		t.Fatalf("delivery %+v reached the receiver %d times", d, len(rc.requests()))
	}
}

// A delivery queued before its creator key was revoked, or before its
// webhook was disabled, is never sent.
func TestQueuedDeliveryStopsWhenItsAuthorityEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(f *fixture, a []*keys.Key, w *webhooks.Webhook) error
		why  string
	}{
		{"CreatorRevoked", func(f *fixture, a []*keys.Key, _ *webhooks.Webhook) error {
			_, err := f.keys.Revoke(context.Background(), f.root[0], a[1].ID)
			return err
		}, "revoked"},
		{"WebhookDisabled", func(f *fixture, a []*keys.Key, w *webhooks.Webhook) error {
			_, err := f.repo.Disable(context.Background(), as(a, ""), w.ID)
			return err
		}, "disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, teststores.Embedded)
			rc := newReceiver(t)
			a := f.child(f.root, keys.CreateKeyRequest{Label: "a"})
			w, _ := f.loopbackHook(a, rc)
			f.publish("project.created")
			if err := tc.end(f, a, w); err != nil {
				t.Fatal(err)
			}
			if err := f.worker(workerOpts{allowPrivate: true}).Handle(context.Background(), receiveOne(t, f.q)); err != nil {
				t.Fatalf("Handle = %v; nothing is left to retry", err)
			}
			d := f.waitFor(w, webhooks.DeliveryFailed)
			if len(rc.requests()) != 0 || d.Attempts != 0 || !strings.Contains(*d.LastError, tc.why) {
				t.Fatalf("delivery %+v, %d requests", d, len(rc.requests()))
			}
		})
	}
}

// After a rotation deliveries carry one v1 per valid secret, so receivers
// holding either verify; after 24 hours only the new secret signs.
func TestRotationSignsWithBothSecretsFor24Hours(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	rc := newReceiver(t)
	w, old := f.loopbackHook(f.root, rc)
	_, fresh, err := f.repo.RotateSecret(context.Background(), as(f.root, ""), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	wk := f.worker(workerOpts{allowPrivate: true})
	deliver := func() received {
		f.publish("project.created")
		if err := wk.Handle(context.Background(), receiveOne(t, f.q)); err != nil {
			t.Fatal(err)
		}
		got := rc.requests()
		return got[len(got)-1]
	}
	r := deliver()
	sig := r.header.Get("X-Service-Signature")
	if strings.Count(sig, "v1=") != 2 {
		t.Fatalf("signature %q", sig)
	}
	std := r.header.Get("webhook-signature")
	for _, s := range []string{old, fresh} {
		if err := webhooks.Verify(sig, r.body, s, f.clock.Now()); err != nil {
			t.Fatalf("during the grace period: %v", err)
		}
		if strings.Count(std, "v1,") != 2 || !standardReceiverVerifies(r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"), std, r.body, s) {
			t.Fatalf("webhook-signature %q during the grace period", std)
		}
	}
	f.clock.Advance(24 * time.Hour)
	r = deliver()
	sig = r.header.Get("X-Service-Signature")
	if err := webhooks.Verify(sig, r.body, old, f.clock.Now()); !errors.Is(err, webhooks.ErrBadSignature) || strings.Count(sig, "v1=") != 1 {
		t.Fatalf("the old secret still signs after 24 hours: %q", sig)
	}
	if err := webhooks.Verify(sig, r.body, fresh, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if std := r.header.Get("webhook-signature"); strings.Count(std, "v1,") != 1 || !standardReceiverVerifies(r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"), std, r.body, fresh) {
		t.Fatalf("webhook-signature %q after 24 hours", std)
	}
}

// One failing receiver does not hold back, or fail, the rest of a batch.
func TestBatchReportsOnlyTheMessagesToRetry(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	ok, bad := newReceiver(t), newReceiver(t, 500)
	wOK, _ := f.loopbackHook(f.root, ok)
	wBad, _ := f.loopbackHook(f.root, bad)
	f.publish("project.created")
	ms, err := f.q.Receive(context.Background(), 10, time.Minute, time.Second)
	if err != nil || len(ms) != 2 {
		t.Fatalf("receive %v %v", ms, err)
	}
	failed := f.worker(workerOpts{allowPrivate: true}).HandleBatch(context.Background(), ms)
	f.waitFor(wOK, webhooks.DeliveryDelivered)
	dBad := f.waitFor(wBad, webhooks.DeliveryPending)
	if len(failed) != 1 || !strings.Contains(string(bodyOf(ms, failed[0])), dBad.ID) {
		t.Fatalf("failed %v", failed)
	}
}

func bodyOf(ms []queue.Received, id string) []byte {
	for _, m := range ms {
		if m.ID == id {
			return m.Body
		}
	}
	return nil
}

// A message that cannot be parsed will never parse: it is dropped, not
// retried.
func TestMalformedMessageIsDropped(t *testing.T) {
	f := newFixture(t, teststores.Embedded)
	for _, body := range []string{"not json", `{"accountId":""}`} {
		if err := f.worker(workerOpts{}).Handle(context.Background(), queue.Received{ID: "m", Body: []byte(body)}); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
}

// Every outcome of a delivery attempt is a CloudWatch metric on its log
// line (EMF): deliveries, retries and moves to the dead-letter queue, which
// the dashboard and alarms count; never the receiver's URL or a secret.
func TestEveryDeliveryOutcomeIsAMetricLine(t *testing.T) {
	for name, tc := range map[string]struct {
		script      []int
		maxAttempts int
		final       string
		want        map[string]int
	}{
		"retried then delivered": {[]int{500}, 3, webhooks.DeliveryDelivered, map[string]int{"WebhookRetries": 1, "WebhookDeliveries": 1}},
		"dead-lettered":          {[]int{500, 500}, 2, webhooks.DeliveryFailed, map[string]int{"WebhookRetries": 1, "WebhookDeadLettered": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, teststores.Embedded)
			rc := newReceiver(t, tc.script...)
			w, secret := f.loopbackHook(f.root, rc)
			logs := &testlog.Buffer{}
			run(t, f.worker(workerOpts{allowPrivate: true, maxAttempts: tc.maxAttempts, logs: logs}))
			f.publish("project.created")
			d := f.waitFor(w, tc.final)
			var got map[string]int
			// The outcome's line is written just after the outcome is
			// stored: wait for it.
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				got = map[string]int{}
				for _, line := range emftest.Lines(t, logs.String()) {
					declared := emftest.Metrics(line)
					if line["Worker"] != "webhooks" || line["deliveryId"] != d.ID || !declared["WebhookAttemptLatency"] {
						t.Fatalf("line %v", line)
					}
					for m := range declared {
						if m != "WebhookAttemptLatency" {
							got[m] += int(line[m].(float64))
						}
					}
				}
				if fmt.Sprint(got) == fmt.Sprint(tc.want) || time.Now().After(deadline) {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("metrics %v, want %v", got, tc.want)
			}
			if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), rc.URL) {
				t.Fatal("the log holds the webhook's secret or URL")
			}
		})
	}
}

// WEBHOOK_RETRY_BACKOFF replaces the schedule with one wait for every
// retry, within 1 s to 1 h; unset keeps the schedule, and a value it
// cannot honour fails the worker's start instead of retrying at a pace no
// one chose.
func TestRetryBackoffReplacesTheScheduleOnlyWhenSet(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "WEBHOOK_RETRY_BACKOFF" {
				return v
			}
			return ""
		}
	}
	if b, err := webhooks.RetryBackoff(env("")); b != nil || err != nil {
		t.Fatalf("unset: a backoff (%v), want the schedule", err)
	}
	b, err := webhooks.RetryBackoff(env("2s"))
	if err != nil || b == nil {
		t.Fatalf("2s: %v", err)
	}
	for _, n := range []int{1, 2, 8} {
		if got := b(n); got != 2*time.Second {
			t.Errorf("retry after attempt %d waits %v, want 2s", n, got)
		}
	}
	for _, v := range []string{"soon", "0s", "500ms", "2h"} {
		if _, err := webhooks.RetryBackoff(env(v)); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}
