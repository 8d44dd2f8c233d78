package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/emf"
)

// DefaultMaxAttempts is the webhook queue's redrive limit, so that the
// message of a delivery that used its last attempt goes to the dead-letter
// queue.
var DefaultMaxAttempts = work.Webhooks.MaxReceives

// Delivery defaults.
const (
	// DeliveryTimeout bounds one attempt, connection to last byte.
	DeliveryTimeout = 10 * time.Second
	// UserAgent identifies deliveries to receivers.
	UserAgent = "platformapi-webhooks/1"
)

// Backoff is the wait before attempt n+1 after attempt n failed:
// 30 s × 2^(n-1), at most one hour (30 s, 1 min, 2 min, … 32 min).
func Backoff(n int) time.Duration {
	n = min(max(n, 1), 8) // 30 s × 2^7 is past the cap already
	return min(30*time.Second<<(n-1), time.Hour)
}

// WorkerConfig configures a Worker. Config.Queue is the webhook queue.
type WorkerConfig struct {
	Config
	MaxAttempts int                       // default DefaultMaxAttempts
	Backoff     func(n int) time.Duration // default Backoff
	Timeout     time.Duration             // default DeliveryTimeout
	Logger      *slog.Logger
}

// Worker sends deliveries: one queue message, one signed POST.
type Worker struct {
	repo        *Repo
	client      *http.Client
	maxAttempts int
	backoff     func(int) time.Duration
	timeout     time.Duration
	log         *slog.Logger
}

// NewWorker builds a worker. Its HTTP client dials through the guard (so
// every connection, after DNS, is checked), uses no proxy, and never follows
// a redirect: a 3xx is a failed attempt.
func NewWorker(c WorkerConfig) *Worker {
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff == nil {
		c.Backoff = Backoff
	}
	if c.Timeout == 0 {
		c.Timeout = DeliveryTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	dialer := &net.Dialer{Timeout: c.Timeout, Control: c.Guard.Control}
	client := &http.Client{
		Timeout: c.Timeout,
		Transport: &http.Transport{
			DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: c.Timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Worker{repo: NewRepo(c.Config), client: client, maxAttempts: c.MaxAttempts, backoff: c.Backoff, timeout: c.Timeout, log: c.Logger}
}

// ErrRetry is returned (wrapped) by Handle when the attempt failed and the
// message was rescheduled; ErrGaveUp when the last attempt failed and the
// message is left for the dead-letter queue.
var (
	ErrRetry  = errors.New("webhooks: delivery attempt failed; retry scheduled")
	ErrGaveUp = errors.New("webhooks: delivery failed after its last attempt")
)

// Handle processes one queue message. nil means the message is done with
// and should be deleted (delivered, or nothing left to deliver); an error
// means leave it in the queue: after a failed attempt Handle has already set
// its visibility to the backoff, and after a transient error (storage, key
// service) the queue's visibility timeout brings it back.
func (w *Worker) Handle(ctx context.Context, m queue.Received) error {
	var msg message
	if err := json.Unmarshal(m.Body, &msg); err != nil || msg.AccountID == "" || msg.DeliveryID == "" {
		w.log.Error("webhook message malformed; dropped", "messageId", m.ID)
		return nil
	}
	d, err := w.repo.delivery(ctx, msg.AccountID, msg.DeliveryID)
	if err != nil {
		if errors.Is(err, errNoDelivery) {
			return nil
		}
		return err
	}
	if d.Status != DeliveryPending {
		return nil
	}
	wh, reason, err := w.target(ctx, msg.AccountID, d)
	if err != nil {
		return err
	}
	if reason != "" {
		d.Status, d.LastError, d.NextAttemptAt = DeliveryFailed, &reason, nil
		if err := w.record(ctx, msg.AccountID, d); err != nil {
			return err
		}
		w.metric(d.ID, "WebhookAbandoned", -1)
		return nil
	}
	now := w.repo.now().UTC()
	secrets, err := w.repo.secrets(ctx, wh, now)
	if err != nil {
		return err
	}
	start := time.Now()
	code, sendErr := w.send(ctx, wh.URL, d, now, secrets)
	took := time.Since(start)
	d.Attempts++
	d.LastStatusCode = nil
	if code != 0 {
		d.LastStatusCode = &code
	}
	if sendErr == nil {
		d.Status, d.LastError, d.NextAttemptAt, d.DeliveredAt = DeliveryDelivered, nil, nil, &now
		if err := w.record(ctx, msg.AccountID, d); err != nil {
			return err
		}
		w.metric(d.ID, "WebhookDeliveries", took)
		return nil
	}
	text := truncate(sendErr.Error(), 500)
	d.LastError = &text
	if d.Attempts >= w.maxAttempts || m.Attempts >= w.maxAttempts {
		d.Status, d.NextAttemptAt = DeliveryFailed, nil
		if err := w.record(ctx, msg.AccountID, d); err != nil {
			return err
		}
		// Visible at once, so the queue moves it to the dead-letter queue
		// on its next receive.
		_ = w.repo.q.ChangeVisibility(ctx, m.Receipt, 0)
		w.metric(d.ID, "WebhookDeadLettered", took)
		return fmt.Errorf("%w: %s", ErrGaveUp, d.ID)
	}
	wait := w.backoff(d.Attempts)
	next := now.Add(wait)
	d.NextAttemptAt = &next
	if err := w.record(ctx, msg.AccountID, d); err != nil {
		return err
	}
	w.metric(d.ID, "WebhookRetries", took)
	if err := w.repo.q.ChangeVisibility(ctx, m.Receipt, wait); err != nil {
		return fmt.Errorf("%w: %s: reschedule: %v", ErrRetry, d.ID, err)
	}
	return fmt.Errorf("%w: %s in %v", ErrRetry, d.ID, wait)
}

// metric writes the outcome of a delivery as one log line with its
// CloudWatch metric (see shared/base/emf): WebhookDeliveries, WebhookRetries,
// WebhookDeadLettered (the last attempt failed: the message goes to the
// dead-letter queue) or WebhookAbandoned (nothing left to deliver to), and
// the attempt's latency when one was made (took >= 0). The dimension is
// the worker only: receivers and accounts are properties, never dimensions.
func (w *Worker) metric(deliveryID, outcome string, took time.Duration) {
	ms := []emf.Metric{{Name: outcome, Unit: emf.Count, Value: 1}}
	if took >= 0 {
		ms = append(ms, emf.Metric{Name: "WebhookAttemptLatency", Unit: emf.Milliseconds, Value: took.Milliseconds()})
	}
	l := (&emf.Line{}).Dimension("Worker", "webhooks").Add(emf.Directive{Dimensions: [][]string{{"Worker"}}, Metrics: ms})
	w.log.Info("webhook delivery", append([]any{slog.String("deliveryId", deliveryID), slog.String("outcome", outcome)}, l.Attrs(time.Now())...)...)
}

// target returns the webhook of d, or why d can no longer be delivered.
func (w *Worker) target(ctx context.Context, accountID string, d *Delivery) (*Webhook, string, error) {
	it, err := w.repo.st.Get(ctx, webhookKey(accountID, d.WebhookID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, "the webhook no longer exists", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("webhooks: read webhook: %w", err)
	}
	wh, err := decodeWebhook(it)
	if err != nil {
		return nil, "", err
	}
	if wh.Status != StatusActive {
		return nil, "the webhook is disabled", nil
	}
	ok, err := w.repo.creatorAlive(ctx, wh, w.repo.now())
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "the key that created the webhook, or one of its ancestors, is revoked or expired", nil
	}
	return wh, "", nil
}

// record saves d's new state unless another consumer finished it first.
func (w *Worker) record(ctx context.Context, accountID string, d *Delivery) error {
	_, err := w.repo.st.Update(ctx, deliveryKey(accountID, d.ID),
		store.Update{Set: map[string]any{store.AttrDoc: store.DocOf(d), "status": d.Status}},
		store.AttrEquals("status", DeliveryPending))
	if errors.Is(err, store.ErrConditionFailed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("webhooks: record delivery %s: %w", d.ID, err)
	}
	return nil
}

// send makes one attempt, signed at now with secrets twice: in the API's own
// X-Service-Signature and in the Standard Webhooks headers, so receivers
// can verify with that specification's libraries. It returns the receiver's
// status (0 if none) and an error unless the receiver answered 2xx.
func (w *Worker) send(ctx context.Context, url string, d *Delivery, now time.Time, secrets []string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("X-Service-Event", d.Event)
	req.Header.Set("X-Service-Delivery-Id", d.ID)
	req.Header.Set("X-Service-Signature", Sign(now, d.Payload, secrets...))
	req.Header.Set("webhook-id", d.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", SignStandard(d.EventID, now, d.Payload, secrets...))
	res, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return res.StatusCode, nil
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return res.StatusCode, fmt.Errorf("receiver answered %s; redirects are not followed", res.Status)
	}
	return res.StatusCode, fmt.Errorf("receiver answered %s", res.Status)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
