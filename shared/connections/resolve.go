package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"platformapi/shared/apierr"
	"platformapi/shared/ids"
	"platformapi/shared/store"
)

// Resolve checks and opens the connections an invoke or run names for
// serviceID ("connections":{"<slot>":"con_…"}): each must be in the
// account and project (else 404 not_found), active (409
// connection_disabled) and list the service (403 connection_not_allowed);
// slots are checked in name order and the first failure is returned. It
// opens each connection's current version and records lastUsedAt at most
// once per TouchInterval. No slots: nil, nil.
func (r *Repo) Resolve(ctx context.Context, accountID, projectID, serviceID string, slots map[string]string) (map[string]Credential, error) {
	if len(slots) == 0 {
		return nil, nil
	}
	if len(slots) > MaxSlots {
		return nil, apierr.Invalid("Too many connections.", apierr.Field("body.connections", "at most %d", MaxSlots))
	}
	names := make([]string, 0, len(slots))
	for slot := range slots {
		if err := checkSlot(slot); err != nil {
			return nil, err
		}
		names = append(names, slot)
	}
	slices.Sort(names)
	if r.sealer == nil {
		return nil, errNotConfigured
	}
	var keys []store.Key
	for _, slot := range names {
		id := slots[slot]
		if !ids.Valid("con", id) {
			return nil, slotNotFound(slot)
		}
		if k := itemKey(accountID, projectID, id); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	records, err := r.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("connections: resolve: %w", err)
	}
	conns := map[string]*Connection{}
	var versions []store.Key
	for _, slot := range names {
		id := slots[slot]
		it, ok := records[itemKey(accountID, projectID, id).String()]
		if !ok {
			return nil, slotNotFound(slot)
		}
		c, err := decode(it)
		if err != nil {
			return nil, err
		}
		if err := usable(c, slot, serviceID); err != nil {
			return nil, err
		}
		if _, seen := conns[id]; !seen {
			conns[id] = c
			versions = append(versions, versionKey(accountID, id, c.CredentialVersion))
		}
	}
	sealed, err := r.st.BatchGet(ctx, versions)
	if err != nil {
		return nil, fmt.Errorf("connections: resolve: %w", err)
	}
	opened := map[string]Credential{}
	for id, c := range conns {
		it, ok := sealed[versionKey(accountID, id, c.CredentialVersion).String()]
		if !ok {
			return nil, fmt.Errorf("connections: %s has no sealed version %d", id, c.CredentialVersion)
		}
		if opened[id], err = r.open(ctx, accountID, c, c.CredentialVersion, it); err != nil {
			return nil, err
		}
	}
	if err := r.touch(ctx, accountID, projectID, conns); err != nil {
		return nil, err
	}
	out := make(map[string]Credential, len(slots))
	for _, slot := range names {
		out[slot] = opened[slots[slot]]
	}
	return out, nil
}

// ResolveVersion opens one version of a connection under the same rules as
// Resolve: the current version, or the one a rotation replaced while its
// PreviousVersionTTL lasts (for a run that resolved it before the
// rotation). Any other version is not_found.
func (r *Repo) ResolveVersion(ctx context.Context, accountID, projectID, serviceID, id string, version int64) (Credential, error) {
	if r.sealer == nil {
		return Credential{}, errNotConfigured
	}
	c, _, err := r.get(ctx, accountID, projectID, id)
	if err != nil {
		return Credential{}, err
	}
	if err := usable(c, "", serviceID); err != nil {
		return Credential{}, err
	}
	if version < 1 || version > c.CredentialVersion {
		return Credential{}, errVersionGone
	}
	it, err := r.st.Get(ctx, versionKey(accountID, id, version))
	if errors.Is(err, store.ErrNotFound) {
		return Credential{}, errVersionGone
	}
	if err != nil {
		return Credential{}, fmt.Errorf("connections: resolve version: %w", err)
	}
	return r.open(ctx, accountID, c, version, it)
}

var errVersionGone = apierr.New(apierr.NotFound, "That version of the connection's credentials no longer exists.")

func (r *Repo) open(ctx context.Context, accountID string, c *Connection, version int64, it store.Item) (Credential, error) {
	plain, err := r.sealer.Open(ctx, it.Bytes(attrSealed), associatedData(accountID, c.ID, version))
	if err != nil {
		return Credential{}, fmt.Errorf("connections: open %s v%d: %w", c.ID, version, err)
	}
	defer clear(plain)
	var s secret
	if err := json.Unmarshal(plain, &s); err != nil {
		return Credential{}, fmt.Errorf("connections: %s v%d: sealed credentials unreadable", c.ID, version)
	}
	return s.credential(c, version), nil
}

func slotNotFound(slot string) error {
	return apierr.New(apierr.NotFound, "No such connection for slot %q.", slot)
}

func usable(c *Connection, slot, serviceID string) error {
	what := "The connection"
	if slot != "" {
		what = fmt.Sprintf("The connection for slot %q", slot)
	}
	if c.Status != StatusActive {
		return apierr.New(apierr.ConnectionDisabled, "%s is disabled.", what)
	}
	if !slices.Contains(c.ServiceIDs, serviceID) {
		return apierr.New(apierr.ConnectionNotAllowed, "%s does not allow the service %s.", what, serviceID)
	}
	return nil
}

// touch records lastUsedAt on connections last used more than a
// TouchInterval ago. The condition makes concurrent calls write once; a
// lost race, or a connection deleted meanwhile, is not an error.
func (r *Repo) touch(ctx context.Context, accountID, projectID string, conns map[string]*Connection) error {
	now := r.now().UTC()
	stale := now.Add(-TouchInterval).Unix() + 1 // lastUsedAt below this is a minute old
	for id, c := range conns {
		if c.LastUsedAt != nil && c.LastUsedAt.Unix() >= stale {
			continue
		}
		_, err := r.st.Update(ctx, itemKey(accountID, projectID, id), store.Update{Set: map[string]any{attrLastUsedAt: now.Unix()}},
			store.Exists(), store.NumBelow(attrLastUsedAt, stale))
		if err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("connections: touch: %w", err)
		}
	}
	return nil
}

// MarkUnauthorized records that the service refused the given version of a
// connection's credentials (upstream.ErrCredentialRejected). A version that
// a rotation has since replaced is left alone: the new credentials have not
// been refused. A connection deleted meanwhile is not an error.
func (r *Repo) MarkUnauthorized(ctx context.Context, accountID, projectID, id string, version int64) error {
	if !ids.Valid("con", id) {
		return errNotFound
	}
	_, err := r.st.Update(ctx, itemKey(accountID, projectID, id), store.Update{Set: map[string]any{attrStatusReason: ReasonUnauthorized}},
		store.Exists(), store.AttrEquals(attrVersion, version))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("connections: mark unauthorized: %w", err)
	}
	return nil
}
