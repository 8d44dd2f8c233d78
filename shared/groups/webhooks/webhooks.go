// Package webhooks holds webhooks end to end: the webhook resource with its
// sealed signing secret, the URL guard that keeps deliveries on the public
// internet, publishing an event into one pending delivery per subscribed
// webhook, and the worker that signs, sends and retries deliveries through
// the queue port. It never sees HTTP requests of the API or any AWS type; it
// must never store or log a signing secret in the clear.
//
// Storage (single table, in the account's partition):
//
//	acct#<acct> | whk#<id>   the webhook; doc JSON, status, sealed secrets
//	acct#<acct> | whd#<id>   a delivery; doc JSON, status, webhookId;
//	                         expires DeliveryRetention after it was created
package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/groups/keys"
)

// Webhook status values.
const (
	StatusActive   = "active"
	StatusDisabled = "disabled"
)

// Delivery status values.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// RotationGrace is how long a rotated-out secret still signs deliveries.
const RotationGrace = 24 * time.Hour

// DeliveryRetention is how long delivery records are kept.
const DeliveryRetention = 30 * 24 * time.Hour

// Webhook is the resource.
type Webhook struct {
	ID                      string     `json:"id"`
	URL                     string     `json:"url"`
	Events                  []string   `json:"events" doc:"Subscribed event names, or [\"*\"] for every event"`
	Description             string     `json:"description"`
	Status                  string     `json:"status" enum:"active,disabled"`
	ProjectID               *string    `json:"projectId" doc:"Only this project's events are delivered; null: every event of the account"`
	CreatedByKeyID          string     `json:"createdByKeyId" doc:"The key whose authority the webhook lives under: revoking it or an ancestor stops deliveries"`
	CreatedAt               time.Time  `json:"createdAt"`
	UpdatedAt               time.Time  `json:"updatedAt"`
	DisabledAt              *time.Time `json:"disabledAt"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt" doc:"Until then deliveries are also signed with the secret replaced by the last rotation"`

	// CreatorPath is the creator key's chain, root first, creator last: the
	// keys that may manage the webhook, and whose validity it depends on.
	CreatorPath    []string `json:"-"`
	secret         []byte   // sealed
	previousSecret []byte   // sealed
}

// Delivery is one event sent (or to be sent) to one webhook.
type Delivery struct {
	ID             string          `json:"id"`
	WebhookID      string          `json:"webhookId"`
	Event          string          `json:"event"`
	EventID        string          `json:"eventId"`
	Payload        json.RawMessage `json:"payload" doc:"The exact body sent"`
	Status         string          `json:"status" enum:"pending,delivered,failed"`
	Attempts       int             `json:"attempts"`
	LastStatusCode *int            `json:"lastStatusCode" doc:"HTTP status of the last attempt, null if it got none"`
	LastError      *string         `json:"lastError"`
	NextAttemptAt  *time.Time      `json:"nextAttemptAt"`
	ReplayOf       *string         `json:"replayOf" doc:"The delivery this one replays"`
	CreatedAt      time.Time       `json:"createdAt"`
	DeliveredAt    *time.Time      `json:"deliveredAt"`
}

// Caller is the key managing webhooks: its account, its chain of key ids
// (root first, the caller last), its project scope ("" at account level)
// and its record, whose scopes, services and operations decide which
// events a webhook it creates may subscribe to.
type Caller struct {
	AccountID string
	KeyPath   []string
	ProjectID string
	Key       *keys.Key
}

func (c Caller) keyID() string { return c.KeyPath[len(c.KeyPath)-1] }

// manages reports whether c may see and change w: w was created by c or by
// one of c's descendants, and w is in c's project scope.
func (c Caller) manages(w *Webhook) bool {
	if !slices.Contains(w.CreatorPath, c.keyID()) {
		return false
	}
	return c.ProjectID == "" || w.ProjectID != nil && *w.ProjectID == c.ProjectID
}

// Config are a Repo's dependencies.
type Config struct {
	Store  store.Store
	Sealer envelope.Sealer
	// Queue carries deliveries to the worker; nil disables publishing.
	Queue queue.Queue
	Guard Guard
	Now   func() time.Time
}

// Repo manages webhooks and publishes events to them.
type Repo struct {
	st     store.Store
	sealer envelope.Sealer
	q      queue.Queue
	guard  Guard
	now    func() time.Time
}

// NewRepo builds a repository.
func NewRepo(c Config) *Repo {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Repo{st: c.Store, sealer: c.Sealer, q: c.Queue, guard: c.Guard, now: c.Now}
}

func webhookKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "whk#" + id}
}

func deliveryKey(accountID, id string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "whd#" + id}
}

// storedWebhook adds what clients never see to the document.
type storedWebhook struct {
	Webhook
	CreatorPath []string `json:"creatorPath"`
}

func encodeWebhook(accountID string, w *Webhook) store.Item {
	it := store.NewItem(webhookKey(accountID, w.ID))
	it.SetDoc(storedWebhook{Webhook: *w, CreatorPath: w.CreatorPath})
	it["status"] = w.Status
	it["secret"] = w.secret
	if w.previousSecret != nil {
		it["previousSecret"] = w.previousSecret
	}
	return it
}

func decodeWebhook(it store.Item) (*Webhook, error) {
	var s storedWebhook
	if err := it.Doc(&s); err != nil {
		return nil, fmt.Errorf("webhooks: decode %s: %w", it.Key(), err)
	}
	w := s.Webhook
	w.CreatorPath, w.secret, w.previousSecret = s.CreatorPath, it.Bytes("secret"), it.Bytes("previousSecret")
	return &w, nil
}

func encodeDelivery(accountID string, d *Delivery) store.Item {
	it := store.NewItem(deliveryKey(accountID, d.ID))
	it.SetDoc(d)
	it["status"] = d.Status
	it["webhookId"] = d.WebhookID
	it[store.AttrExpiresAt] = d.CreatedAt.Add(DeliveryRetention).Unix()
	return it
}

func decodeDelivery(it store.Item) (*Delivery, error) {
	var d Delivery
	if err := it.Doc(&d); err != nil {
		return nil, fmt.Errorf("webhooks: decode %s: %w", it.Key(), err)
	}
	return &d, nil
}

// message is the queue body of one delivery.
type message struct {
	AccountID  string `json:"accountId"`
	DeliveryID string `json:"deliveryId"`
}

// secrets opens the secrets that sign a delivery at now: the current one,
// and the previous one during its grace period.
func (r *Repo) secrets(ctx context.Context, w *Webhook, now time.Time) ([]string, error) {
	cur, err := r.sealer.Open(ctx, w.secret, []byte(w.ID))
	if err != nil {
		return nil, fmt.Errorf("webhooks: open secret of %s: %w", w.ID, err)
	}
	out := []string{string(cur)}
	if w.previousSecret != nil && w.PreviousSecretExpiresAt != nil && now.Before(*w.PreviousSecretExpiresAt) {
		prev, err := r.sealer.Open(ctx, w.previousSecret, []byte(w.ID))
		if err != nil {
			return nil, fmt.Errorf("webhooks: open previous secret of %s: %w", w.ID, err)
		}
		out = append(out, string(prev))
	}
	return out, nil
}
