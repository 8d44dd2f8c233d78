package webhooks

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/paging"
)

// MaxActivePerAccount bounds an account's active webhooks, and with it the
// fan-out (and cost) of publishing one event.
const MaxActivePerAccount = 25

// MaxDescription bounds a webhook's description.
const MaxDescription = 500

// CreateRequest is what a new webhook needs.
type CreateRequest struct {
	URL         string
	Events      []string
	Description string
}

// UpdateRequest changes the fields that are not nil.
type UpdateRequest struct {
	URL         *string
	Events      []string // nil: unchanged
	Description *string
	Status      *string
}

var (
	errNotFound       = apierr.New(apierr.NotFound, "No such webhook.")
	errNotConfigured  = apierr.New(apierr.ServiceUnavailable, "Webhooks are not configured on this deployment.")
	errConcurrentEdit = apierr.New(apierr.Conflict, "The webhook was changed by another request; read it and retry.")
	errTooMany        = apierr.New(apierr.Conflict, "The account already has %d active webhooks; disable one first.", MaxActivePerAccount)
)

// Create makes a webhook under c's authority and returns it with its signing
// secret, the only time the secret is shown.
func (r *Repo) Create(ctx context.Context, c Caller, req CreateRequest) (*Webhook, string, error) {
	if r.sealer == nil {
		return nil, "", errNotConfigured
	}
	events, err := normalizeEvents(req.Events, "body.events")
	if err != nil {
		return nil, "", err
	}
	if c.Key == nil || c.Key.ID != c.keyID() {
		return nil, "", fmt.Errorf("webhooks: create: the caller's key record is missing")
	}
	if err := checkSubscriptions(c.Key, events, req.Events, "body.events"); err != nil {
		return nil, "", err
	}
	if err := checkDescription(req.Description); err != nil {
		return nil, "", err
	}
	if err := r.guard.CheckURL(ctx, req.URL, "body.url"); err != nil {
		return nil, "", err
	}
	now := r.now().UTC()
	w := &Webhook{
		ID: ids.New("whk", now), URL: req.URL, Events: events, Description: req.Description, Status: StatusActive,
		CreatedByKeyID: c.keyID(), CreatedAt: now, UpdatedAt: now, CreatorPath: slices.Clone(c.KeyPath),
	}
	if c.ProjectID != "" {
		w.ProjectID = &c.ProjectID
	}
	secret := NewSecret()
	if w.secret, err = r.sealer.Seal(ctx, []byte(secret), []byte(w.ID)); err != nil {
		return nil, "", fmt.Errorf("webhooks: seal secret: %w", err)
	}
	it := encodeWebhook(c.AccountID, w)
	it["rev"] = int64(1)
	err = idempotency.Transact(ctx, r.st, append([]store.Op{store.PutOp(it, store.NotExists())}, countActive(c.AccountID, 1)...), func(i int) error {
		if i == 1 {
			return errTooMany
		}
		return nil
	})
	if errors.Is(err, errTooMany) {
		return nil, "", errTooMany
	}
	if err != nil {
		return nil, "", fmt.Errorf("webhooks: create: %w", err)
	}
	return w, secret, nil
}

// all reads every webhook of the account.
func (r *Repo) all(ctx context.Context, accountID string) ([]*Webhook, error) {
	revs, err := r.allWithRev(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]*Webhook, len(revs))
	for i, wr := range revs {
		out[i] = wr.w
	}
	return out, nil
}

func normalizeEvents(in []string, location string) ([]string, error) {
	if len(in) == 0 {
		return nil, apierr.Invalid("Subscribe to at least one event.", apierr.Field(location, "at least one event name, or \"*\""))
	}
	var out []string
	for i, e := range in {
		if e != AllEvents && !KnownEvent(e) {
			return nil, apierr.Invalid("Unknown event.", apierr.Field(fmt.Sprintf("%s[%d]", location, i), "no event %q", e))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if slices.Contains(out, AllEvents) {
		return []string{AllEvents}, nil
	}
	return out, nil
}

func checkDescription(d string) error {
	if len(d) > MaxDescription {
		return apierr.Invalid("Description too long.", apierr.Field("body.description", "at most %d bytes", MaxDescription))
	}
	return nil
}

// Get returns webhook id if c manages it; otherwise not_found, never a hint
// that it exists.
func (r *Repo) Get(ctx context.Context, c Caller, id string) (*Webhook, error) {
	w, _, err := r.get(ctx, c, id)
	return w, err
}

func (r *Repo) get(ctx context.Context, c Caller, id string) (*Webhook, int64, error) {
	if !ids.Valid("whk", id) {
		return nil, 0, errNotFound
	}
	it, err := r.st.Get(ctx, webhookKey(c.AccountID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, errNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("webhooks: get: %w", err)
	}
	w, err := decodeWebhook(it)
	if err != nil {
		return nil, 0, err
	}
	if !c.manages(w) {
		return nil, 0, errNotFound
	}
	return w, it.Int("rev"), nil
}

// List pages through the webhooks c manages, oldest first.
func (r *Repo) List(ctx context.Context, c Caller, limit int, cursor string) ([]*Webhook, string, error) {
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	var out []*Webhook
	for {
		page, err := r.st.Query(ctx, store.Query{PK: "acct#" + c.AccountID, Prefix: "whk#", After: after, Limit: limit})
		if err != nil {
			return nil, "", fmt.Errorf("webhooks: list: %w", err)
		}
		for i, it := range page.Items {
			after = it.Key().SK
			w, err := decodeWebhook(it)
			if err != nil {
				return nil, "", err
			}
			if !c.manages(w) {
				continue
			}
			out = append(out, w)
			if len(out) == limit {
				return out, nextCursor(after, page.More || i < len(page.Items)-1), nil
			}
		}
		if !page.More {
			return out, "", nil
		}
	}
}

func nextCursor(after string, more bool) string {
	if !more {
		return ""
	}
	return paging.Cursor(after)
}
