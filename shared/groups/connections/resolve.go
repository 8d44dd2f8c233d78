package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
)

// Resolve checks and opens the connections an invoke or run names for
// serviceID ("connections":{"<slot>":"con_…"}): each must be in the
// account and project (else 404 not_found), active (409
// connection_disabled) and list the service (403 connection_not_allowed);
// slots are checked in name order and the first failure is returned. It
// opens each connection's current version and records lastUsedAt at most
// once per TouchInterval. No slots: nil, nil.
func (r *Repo) Resolve(ctx context.Context, accountID, projectID, serviceID string, slots map[string]string) (map[string]Credential, error) {
	return r.ResolvePinned(ctx, accountID, projectID, serviceID, slots, nil)
}

// Check applies Resolve's rules without opening anything and returns the
// current credential version of each slot's connection: what a durable run
// records when it is created, to be opened by ResolvePinned when it
// executes. It writes nothing and needs no sealer.
func (r *Repo) Check(ctx context.Context, accountID, projectID, serviceID string, slots map[string]string) (map[string]int64, error) {
	names, conns, err := r.checked(ctx, accountID, projectID, serviceID, slots)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	out := make(map[string]int64, len(names))
	for _, slot := range names {
		out[slot] = conns[slots[slot]].CredentialVersion
	}
	return out, nil
}

// ResolvePinned is Resolve for a call that recorded, by slot, the version
// each connection had when it was accepted (Check): a slot whose pinned
// version a rotation has replaced since gets that previous version while it
// lasts (PreviousVersionTTL), so a run queued before a rotation executes
// with the credentials it was created with; once it is gone, or without a
// pin, the current version. The connection must still be usable now.
func (r *Repo) ResolvePinned(ctx context.Context, accountID, projectID, serviceID string, slots map[string]string, pinned map[string]int64) (map[string]Credential, error) {
	if len(slots) > 0 && r.sealer == nil {
		return nil, errNotConfigured
	}
	names, conns, err := r.checked(ctx, accountID, projectID, serviceID, slots)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	// previous is the replaced version to prefer per connection; only the
	// one just before the current version is ever kept.
	previous := map[string]int64{}
	var versions []store.Key
	for _, slot := range names {
		id := slots[slot]
		c := conns[id]
		if v, ok := pinned[slot]; ok && v >= 1 && v == c.CredentialVersion-1 && previous[id] == 0 {
			previous[id] = v
			versions = append(versions, versionKey(accountID, id, v))
		}
	}
	for id, c := range conns {
		versions = append(versions, versionKey(accountID, id, c.CredentialVersion))
	}
	sealed, err := r.st.BatchGet(ctx, versions)
	if err != nil {
		return nil, fmt.Errorf("connections: resolve: %w", err)
	}
	opened := map[string]Credential{}
	for id, c := range conns {
		version := c.CredentialVersion
		it, ok := sealed[versionKey(accountID, id, version).String()]
		if v := previous[id]; v != 0 {
			if prev, found := sealed[versionKey(accountID, id, v).String()]; found {
				version, it, ok = v, prev, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("connections: %s has no sealed version %d", id, version)
		}
		if opened[id], err = r.open(ctx, accountID, c, version, it); err != nil {
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

// checked reads the slots' connections and applies the rules of Resolve.
// It returns the slot names in order and the connections by id.
func (r *Repo) checked(ctx context.Context, accountID, projectID, serviceID string, slots map[string]string) ([]string, map[string]*Connection, error) {
	if len(slots) == 0 {
		return nil, nil, nil
	}
	if len(slots) > MaxSlots {
		return nil, nil, apierr.Invalid("Too many connections.", apierr.Field("body.connections", "at most %d", MaxSlots))
	}
	names := make([]string, 0, len(slots))
	for slot := range slots {
		if err := checkSlot(slot); err != nil {
			return nil, nil, err
		}
		names = append(names, slot)
	}
	slices.Sort(names)
	var keys []store.Key
	for _, slot := range names {
		id := slots[slot]
		if !ids.Valid("con", id) {
			return nil, nil, slotNotFound(slot)
		}
		if k := itemKey(accountID, projectID, id); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	records, err := r.st.BatchGet(ctx, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("connections: resolve: %w", err)
	}
	conns := map[string]*Connection{}
	for _, slot := range names {
		id := slots[slot]
		it, ok := records[itemKey(accountID, projectID, id).String()]
		if !ok {
			return nil, nil, slotNotFound(slot)
		}
		c, err := decode(it)
		if err != nil {
			return nil, nil, err
		}
		if err := usable(c, slot, serviceID); err != nil {
			return nil, nil, err
		}
		conns[id] = c
	}
	return names, conns, nil
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

// MarkRejected marks every connection a call used when the call failed
// because the service refused a credential (upstream.ErrCredentialRejected
// anywhere in err's chain); the service does not say which one, so each
// used version is marked. Any other error, or none, marks nothing.
func (r *Repo) MarkRejected(ctx context.Context, accountID, projectID string, used map[string]Credential, err error) error {
	if !errors.Is(err, upstream.ErrCredentialRejected) {
		return nil
	}
	for _, c := range used {
		if err := r.MarkUnauthorized(ctx, accountID, projectID, c.ConnectionID, c.Version); err != nil {
			return err
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
