package keys

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/idempotency"
)

// MaxRollOverlap is the longest a rolled key keeps working beside its
// successor: long enough to redeploy every client, short enough that a
// leaked key being rolled away stops soon.
const MaxRollOverlap = 7 * 24 * time.Hour

// RollRequest is the body of POST /api-keys/{id}/roll.
type RollRequest struct {
	ExpiresAt time.Time `json:"expiresAt" required:"true" doc:"RFC 3339: when the rolled key stops working. Not in the past, at most 7 days ahead and not later than its current expiry; until then both keys work"`
}

// Rolled is the result of a roll: the successor with its secret, and the
// rolled key as it now is.
type Rolled struct {
	Created
	Previous *Key
}

// Moves returns the writes that move what lived under the rolled key old
// to its successor (its webhooks), to commit in the roll's transaction.
type Moves func(ctx context.Context, old, successor *Key) ([]store.Op, error)

var errRollRace = apierr.New(apierr.Conflict, "The key was revoked, rolled or changed by another request meanwhile; read it and retry.")

// Roll replaces key id (the caller or a descendant) by a new key with the
// same policy, label, metadata and parent, and makes id expire at
// expiresAt; both work until then. One transaction writes the successor,
// the rolled key's new expiry and its rolledTo mark (a key rolls once), the
// moves, and checks that no ancestor was revoked meanwhile. Nothing is read
// back, so the roll may be deferred into an idempotency unit.
//
// Descendants of the rolled key stay under it, and stop when it expires: a
// key's secret names its ancestors, so a subtree cannot move.
func (r *Repo) Roll(ctx context.Context, caller *Key, id string, expiresAt time.Time, moves Moves) (*Rolled, error) {
	old, err := r.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	if err := checkRollExpiry(old, expiresAt, now); err != nil {
		return nil, err
	}
	chain, err := r.ancestors(ctx, old)
	if err != nil {
		return nil, err
	}
	if st := EffectiveStatus(append(chain, old), now); st != "active" {
		return nil, apierr.New(apierr.Conflict, "Key %s is %s; only an active key can be rolled.", old.ID, st)
	}
	if old.RolledTo != nil {
		return nil, apierr.New(apierr.Conflict, "Key %s was already rolled into %s.", old.ID, *old.RolledTo)
	}
	next := successorOf(old, now)
	secret, hash := NewSecret(next)
	next.Prefix, next.SecretHash = PrefixOf(secret), hash

	rolled := *old
	until := expiresAt.UTC()
	rolled.ExpiresAt, rolled.RolledTo = &until, &next.ID
	ops := r.keyOps(next)
	roll := store.Update{Set: map[string]any{store.AttrDoc: encode(&rolled)[store.AttrDoc], attrRolledTo: next.ID}}
	ops = append(ops, store.UpdateOp(recordKey(old.ID), roll,
		store.Exists(), store.AttrNotExists(attrRevokedAt), store.AttrNotExists(attrRolledTo)))
	// The old key's copies carry its new expiry too.
	replicated, err := r.replicated(ctx, old.ID)
	if err != nil {
		return nil, err
	}
	if replicated {
		ops = append(ops, replicaUpdates(old.ID, roll)...)
	}
	for _, a := range chain {
		ops = append(ops, store.CheckOp(recordKey(a.ID), store.Exists(), store.AttrNotExists(attrRevokedAt)))
	}
	if moves != nil {
		more, err := moves(ctx, old, next)
		if err != nil {
			return nil, err
		}
		ops = append(ops, more...)
	}
	// The idempotent response may need a few members of the same
	// transaction.
	if len(ops) > store.MaxTransactItems-4 {
		return nil, apierr.New(apierr.Conflict, "Key %s has too much to move in one roll (%d writes); delete some of its webhooks first.", old.ID, len(ops))
	}
	if err := idempotency.Transact(ctx, r.st, ops, func(int) error { return errRollRace }); err != nil {
		return nil, fmt.Errorf("keys: roll: %w", err)
	}
	next.Status, rolled.Status = "active", "active"
	return &Rolled{Created: Created{Key: next, Secret: secret}, Previous: &rolled}, nil
}

func checkRollExpiry(old *Key, expiresAt, now time.Time) error {
	bad := func(format string, args ...any) error {
		return apierr.Invalid("The roll request is invalid.", apierr.Field("body.expiresAt", format, args...))
	}
	switch {
	case expiresAt.IsZero():
		return bad("required")
	case expiresAt.Before(now):
		return bad("must not be in the past")
	case expiresAt.After(now.Add(MaxRollOverlap)):
		return bad("at most %s ahead (7 days)", MaxRollOverlap)
	case old.ExpiresAt != nil && expiresAt.After(*old.ExpiresAt):
		return bad("must not be later than the key's current expiry %s", old.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// ancestors reads k's ancestors, root first.
func (r *Repo) ancestors(ctx context.Context, k *Key) ([]*Key, error) {
	want := make([]store.Key, len(k.Ancestors))
	for i, a := range k.Ancestors {
		want[i] = recordKey(a)
	}
	got, err := r.fetch(ctx, want, map[string]*Key{})
	if err != nil {
		return nil, err
	}
	if len(got) != len(want) {
		return nil, apierr.New(apierr.Conflict, "An ancestor of key %s no longer exists.", k.ID)
	}
	return got, nil
}

// successorOf is old's policy under a new id: same parent, scopes,
// boundaries, limits, project, tier, networks, start, expiry, label and
// metadata; a fresh history.
func successorOf(old *Key, now time.Time) *Key {
	n := *old
	n.ID, n.CreatedAt = ids.New("key", now), now
	n.RevokedAt, n.LastUsedAt, n.RolledTo, n.Status = nil, nil, nil, ""
	n.RolledFrom = &old.ID
	n.Scopes = slices.Clone(old.Scopes)
	n.AllowedServices = cloneOrNil(old.AllowedServices)
	n.AllowedOperations = cloneOrNil(old.AllowedOperations)
	n.AllowedIPs = cloneOrNil(old.AllowedIPs)
	n.Ancestors = slices.Clone(old.Ancestors)
	n.Limits = maps.Clone(old.Limits)
	n.Metadata = maps.Clone(old.Metadata)
	return &n
}
