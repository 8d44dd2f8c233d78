package connections

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/paging"
)

// Attributes of the record item besides its document. lastUsedAt and
// statusReason live outside the document so that Resolve and
// MarkUnauthorized can set them without a read-modify-write that would race
// a PATCH; credentialVersion is there for MarkUnauthorized's condition.
const (
	attrRev          = "rev"
	attrVersion      = "credentialVersion"
	attrLastUsedAt   = "lastUsedAt"   // unix seconds
	attrStatusReason = "statusReason" // ReasonUnauthorized or absent
	attrSealed       = "sealed"       // on a version item
)

// accountScope stands for "no project" in sort keys; a project id never
// equals it.
const accountScope = "-"

func partition(accountID string) string { return "acct#" + accountID }

func scope(projectID string) string {
	if projectID == "" {
		return accountScope
	}
	return projectID
}

// itemKey is the record: its sort key carries the scope, so a lookup from
// another project (or at account level) misses it by construction.
func itemKey(accountID, projectID, id string) store.Key {
	return store.Key{PK: partition(accountID), SK: "con#" + scope(projectID) + "#" + id}
}

// versionKey is one sealed version of a connection's credentials.
func versionKey(accountID, id string, version int64) store.Key {
	return store.Key{PK: partition(accountID), SK: fmt.Sprintf("conv#%s#%010d", id, version)}
}

// associatedData binds a sealed version to its account, connection and
// version: moved to another record or replayed as another version, it no
// longer opens.
func associatedData(accountID, id string, version int64) []byte {
	return []byte("platform-api/connection/v1\n" + accountID + "\n" + id + "\n" + strconv.FormatInt(version, 10))
}

// Repo persists connections. Create, Update and Delete each end in one
// store write (a transaction), so they may run on an idempotency.Deferring
// store; Resolve and MarkUnauthorized must not run inside an idempotency
// unit (their conditional bookkeeping writes would fail the unit's commit
// when they lose a harmless race).
type Repo struct {
	st     store.Store
	sealer envelope.Sealer
	now    func() time.Time
}

// NewRepo builds the repository. A nil sealer makes every operation that
// touches credentials answer 503 (connections not configured).
func NewRepo(st store.Store, sealer envelope.Sealer, now func() time.Time) *Repo {
	return &Repo{st: st, sealer: sealer, now: now}
}

var (
	errNotFound      = apierr.New(apierr.NotFound, "No such connection.")
	errNotConfigured = apierr.New(apierr.ServiceUnavailable, "Protected connections are not configured on this deployment.")
	errConcurrent    = apierr.New(apierr.Conflict, "The connection changed concurrently; retry.")
)

func encode(accountID string, c *Connection, rev int64) store.Item {
	it := store.NewItem(itemKey(accountID, projectOf(c), c.ID))
	it.SetDoc(docOf(c))
	it[attrRev] = rev
	it[attrVersion] = c.CredentialVersion
	return it
}

// docOf is the stored document: the record without what lives in its own
// attributes.
func docOf(c *Connection) *Connection {
	d := *c
	d.LastUsedAt, d.StatusReason = nil, nil
	return &d
}

func projectOf(c *Connection) string {
	if c.ProjectID == nil {
		return ""
	}
	return *c.ProjectID
}

func decode(it store.Item) (*Connection, error) {
	var c Connection
	if err := it.Doc(&c); err != nil {
		return nil, fmt.Errorf("connections: decode: %w", err)
	}
	if ts := it.Int(attrLastUsedAt); ts != 0 {
		t := time.Unix(ts, 0).UTC()
		c.LastUsedAt = &t
	}
	if r := it.String(attrStatusReason); r != "" {
		c.StatusReason = &r
	}
	return &c, nil
}

// seal seals one version of the credentials.
func (r *Repo) seal(ctx context.Context, accountID, id string, version int64, s secret) ([]byte, error) {
	plain, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("connections: encode credentials: %w", err)
	}
	defer clear(plain)
	sealed, err := r.sealer.Seal(ctx, plain, associatedData(accountID, id, version))
	if err != nil {
		return nil, fmt.Errorf("connections: seal: %w", err)
	}
	return sealed, nil
}

func versionItem(accountID, id string, version int64, sealed []byte) store.Item {
	it := store.NewItem(versionKey(accountID, id, version))
	it[attrSealed] = sealed
	it[attrVersion] = version
	return it
}

// Create validates the request, seals the credentials as version 1 and
// writes the record and the version in one transaction.
func (r *Repo) Create(ctx context.Context, accountID, projectID string, req CreateRequest) (*Connection, error) {
	if err := checkLabel(req.Label); err != nil {
		return nil, err
	}
	if err := checkType(req.Type); err != nil {
		return nil, err
	}
	s, err := decodeCredentials(req.Type, req.Credentials)
	if err != nil {
		return nil, err
	}
	services, err := normalizeServices(req.ServiceIDs)
	if err != nil {
		return nil, err
	}
	if err := checkMetadata(req.Metadata); err != nil {
		return nil, err
	}
	if r.sealer == nil {
		return nil, errNotConfigured
	}
	now := r.now().UTC()
	c := &Connection{
		ID: ids.New("con", now), Label: req.Label, Type: req.Type, Status: StatusActive, ServiceIDs: services,
		Metadata: req.Metadata, CredentialVersion: 1, CredentialHint: s.hint(req.Type), CreatedAt: now, UpdatedAt: now,
	}
	if projectID != "" {
		c.ProjectID = &projectID
	}
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	sealed, err := r.seal(ctx, accountID, c.ID, 1, s)
	if err != nil {
		return nil, err
	}
	err = r.st.Transact(ctx, []store.Op{
		store.PutOp(encode(accountID, c, 1), store.NotExists()),
		store.PutOp(versionItem(accountID, c.ID, 1, sealed), store.NotExists()),
	})
	if err != nil {
		return nil, fmt.Errorf("connections: create: %w", err)
	}
	return c, nil
}

// Get reads one connection of the account and project; not_found for any
// other scope.
func (r *Repo) Get(ctx context.Context, accountID, projectID, id string) (*Connection, error) {
	c, _, err := r.get(ctx, accountID, projectID, id)
	return c, err
}

func (r *Repo) get(ctx context.Context, accountID, projectID, id string) (*Connection, int64, error) {
	if !ids.Valid("con", id) {
		return nil, 0, errNotFound
	}
	it, err := r.st.Get(ctx, itemKey(accountID, projectID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, errNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("connections: get: %w", err)
	}
	c, err := decode(it)
	return c, it.Int(attrRev), err
}

// List pages through the scope's connections, newest first (ids sort by
// creation time). limit is 1–100.
func (r *Repo) List(ctx context.Context, accountID, projectID string, limit int, cursor string) ([]*Connection, string, error) {
	if limit < 1 || limit > 100 {
		return nil, "", apierr.Invalid("Invalid limit.", apierr.Field("query.limit", "1 to 100"))
	}
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	page, err := r.st.Query(ctx, store.Query{PK: partition(accountID), Prefix: "con#" + scope(projectID) + "#", After: after, Limit: limit, Reverse: true})
	if err != nil {
		return nil, "", fmt.Errorf("connections: list: %w", err)
	}
	out := make([]*Connection, 0, len(page.Items))
	for _, it := range page.Items {
		c, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, c)
	}
	next := ""
	if page.More && len(page.Items) > 0 {
		next = paging.Cursor(page.Items[len(page.Items)-1].Key().SK)
	}
	return out, next, nil
}

// Update relabels, disables or enables, and rotates (credentials: version
// + 1; the replaced version stays usable for PreviousVersionTTL, the one
// before it is destroyed). It returns the record and the events that
// happened, in the order rotated, disabled|enabled; a relabel alone is an
// event-less change. The write is one transaction conditional on the
// revision read, so of two concurrent PATCHes neither is lost: the loser
// reads again and applies its change on top (two rotations make two
// versions), or, inside an idempotency unit, fails its commit.
func (r *Repo) Update(ctx context.Context, accountID, projectID, id string, req UpdateRequest) (*Connection, []string, error) {
	if string(bytes.TrimSpace(req.Credentials)) == "null" { // "credentials": null is an absent field
		req.Credentials = nil
	}
	if req.Label == nil && req.Status == nil && req.Credentials == nil {
		return nil, nil, apierr.Invalid("Nothing to change.", apierr.Field("body", "at least one of label, status, credentials"))
	}
	if req.Label != nil {
		if err := checkLabel(*req.Label); err != nil {
			return nil, nil, err
		}
	}
	if req.Status != nil && *req.Status != StatusActive && *req.Status != StatusDisabled {
		return nil, nil, apierr.Invalid("Invalid status.", apierr.Field("body.status", "active or disabled"))
	}
	if r.sealer == nil {
		return nil, nil, errNotConfigured
	}
	var sealed []byte
	var sealedFor int64
	for range 5 {
		c, rev, err := r.get(ctx, accountID, projectID, id)
		if err != nil {
			return nil, nil, err
		}
		now := r.now().UTC()
		var events []string
		var ops []store.Op
		set := map[string]any{}
		var remove []string
		if req.Credentials != nil {
			s, err := decodeCredentials(c.Type, req.Credentials)
			if err != nil {
				return nil, nil, err
			}
			next := c.CredentialVersion + 1
			if sealedFor != next { // seal again only if a concurrent rotation took the version
				if sealed, err = r.seal(ctx, accountID, c.ID, next, s); err != nil {
					return nil, nil, err
				}
				sealedFor = next
			}
			ops = append(ops,
				store.PutOp(versionItem(accountID, c.ID, next, sealed), store.NotExists()),
				store.UpdateOp(versionKey(accountID, c.ID, c.CredentialVersion),
					store.Update{Set: map[string]any{store.AttrExpiresAt: now.Add(PreviousVersionTTL).Unix()}}, store.Exists()))
			if c.CredentialVersion > 1 {
				ops = append(ops, store.DeleteOp(versionKey(accountID, c.ID, c.CredentialVersion-1)))
			}
			c.CredentialVersion, c.CredentialHint, c.RotatedAt, c.StatusReason = next, s.hint(c.Type), &now, nil
			remove = append(remove, attrStatusReason)
			events = append(events, EventRotated)
		}
		if req.Status != nil && *req.Status != c.Status {
			c.Status = *req.Status
			if c.Status == StatusDisabled {
				c.DisabledAt = &now
				events = append(events, EventDisabled)
			} else {
				c.DisabledAt = nil
				events = append(events, EventEnabled)
			}
		}
		if req.Label != nil {
			c.Label = *req.Label
		}
		c.UpdatedAt = now
		set[store.AttrDoc] = store.DocOf(docOf(c))
		set[attrRev] = rev + 1
		set[attrVersion] = c.CredentialVersion
		record := store.UpdateOp(itemKey(accountID, projectID, c.ID), store.Update{Set: set, Remove: remove},
			store.Exists(), store.AttrEquals(attrRev, rev))
		err = r.st.Transact(ctx, append([]store.Op{record}, ops...))
		var tx *store.TxError
		if errors.As(err, &tx) && tx.Index == 0 {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("connections: update: %w", err)
		}
		return c, events, nil
	}
	return nil, nil, errConcurrent
}

// Delete destroys the record and every sealed version (the current one and
// a previous one still within its 24 hours) in one transaction, guarded by
// the revision read so a concurrent rotation cannot leave a version behind.
// It returns the record as it was, for the connection.deleted event.
func (r *Repo) Delete(ctx context.Context, accountID, projectID, id string) (*Connection, error) {
	for range 5 {
		c, rev, err := r.get(ctx, accountID, projectID, id)
		if err != nil {
			return nil, err
		}
		ops := []store.Op{
			store.DeleteOp(itemKey(accountID, projectID, c.ID), store.AttrEquals(attrRev, rev)),
			store.DeleteOp(versionKey(accountID, c.ID, c.CredentialVersion)),
		}
		if c.CredentialVersion > 1 {
			ops = append(ops, store.DeleteOp(versionKey(accountID, c.ID, c.CredentialVersion-1)))
		}
		err = r.st.Transact(ctx, ops)
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("connections: delete: %w", err)
		}
		return c, nil
	}
	return nil, errConcurrent
}
