package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"platformapi/shared/accounts"
	"platformapi/shared/apierr"
	"platformapi/shared/credits"
	"platformapi/shared/credittoken"
	"platformapi/shared/idempotency"
	"platformapi/shared/ids"
	"platformapi/shared/limits"
	"platformapi/shared/paging"
	"platformapi/shared/store"
)

// Storage layout (single table):
//
//	key#<id>      | key            the record; revokedAt as its own attribute
//	acct#<acct>   | key#<path>     index for "the caller and its descendants":
//	                               path is root/…/id, so a subtree is one prefix query
//	ctk#<tokenId> | redeemed       a credit token's single use
//
// A key record's revokedAt, lastUsedAt and rolledTo are attributes of
// their own, beside the doc: each is set by one conditional update that
// never rewrites the document.
const (
	attrRevokedAt  = "revokedAt"
	attrLastUsedAt = "lastUsedAt"
	attrRolledTo   = "rolledTo"
)

func recordKey(id string) store.Key { return store.Key{PK: "key#" + id, SK: "key"} }
func indexKey(accountID, path string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "key#" + path}
}

type stored struct {
	Key
	AccountID  string   `json:"accountId"`
	Ancestors  []string `json:"ancestors"`
	SecretHash []byte   `json:"secretHash"`
}

func encode(k *Key) store.Item {
	it := store.NewItem(recordKey(k.ID))
	doc := stored{Key: *k, AccountID: k.AccountID, Ancestors: k.Ancestors, SecretHash: k.SecretHash}
	doc.RevokedAt, doc.LastUsedAt, doc.RolledTo = nil, nil, nil // attributes of their own
	it.SetDoc(doc)
	return it
}

// decode reads a key record as it is stored now: the document, decoded
// once per distinct byte string (see docCache), and the revocation, an
// attribute of its own read on every call, so that revocation acts at once.
// The returned key is the caller's, but its slices, map and pointers are
// shared with every other decode of the same bytes: read them, never write
// through them (a key is changed by building a new one, see Build).
func decode(it store.Item) (*Key, error) {
	doc := it.Bytes(store.AttrDoc)
	tmpl := decoded.get(doc)
	if tmpl == nil {
		var s stored
		if err := json.Unmarshal(doc, &s); err != nil {
			return nil, fmt.Errorf("keys: decode %s: %w", it.Key(), err)
		}
		tmpl = &s.Key
		tmpl.AccountID, tmpl.Ancestors, tmpl.SecretHash = s.AccountID, s.Ancestors, s.SecretHash
		if tmpl.Limits == nil {
			tmpl.Limits = limits.Set{}
		}
		if tmpl.Metadata == nil {
			tmpl.Metadata = Metadata{}
		}
		decoded.put(doc, tmpl)
	}
	k := *tmpl
	if ms := it.Int(attrRevokedAt); ms != 0 {
		t := time.UnixMilli(ms).UTC()
		k.RevokedAt = &t
	}
	if ms := it.Int(attrLastUsedAt); ms != 0 {
		t := time.UnixMilli(ms).UTC()
		k.LastUsedAt = &t
	}
	if to := it.String(attrRolledTo); to != "" {
		k.RolledTo = &to
	}
	return &k, nil
}

// decoded holds the keys of this process's recent requests.
var decoded = docCache{max: 4096, m: map[string]*Key{}}

// docCache maps a key record's document bytes to the key they decode to.
// Keyed by the bytes themselves, it can never answer for a record that
// changed: a new document is a new entry, and the revocation is not in the
// document. Reflective JSON decoding was a quarter of an authenticated
// request's CPU (docs/benchmarks.md); a lookup costs a hash of ~600 bytes. Bounded: a
// full cache forgets an arbitrary entry for each new one.
type docCache struct {
	mu  sync.RWMutex
	max int
	m   map[string]*Key
}

func (c *docCache) get(doc []byte) *Key {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[string(doc)]
}

func (c *docCache) put(doc []byte, k *Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[string(doc)] = k
}

// Repo persists keys and accounts' first keys.
type Repo struct {
	st  store.Store
	now func() time.Time
}

// NewRepo builds a key repository on the item store.
func NewRepo(st store.Store, now func() time.Time) *Repo { return &Repo{st: st, now: now} }

// Created is a new key with its secret, the only time the secret exists
// outside the caller's hands.
type Created struct {
	Key    *Key
	Secret string
}

// CreateAccount redeems a credit token: one transaction creates the account
// funded with the token's credits, the ledger entry, the root key and the
// token's redemption record, so a token redeems once even when redemptions
// race.
func (r *Repo) CreateAccount(ctx context.Context, c credittoken.Claims, req CreateKeyRequest) (*Created, error) {
	now := r.now()
	accountID := ids.New("acct", now)
	k, err := Build(nil, accountID, req, now, func(string) bool { return false })
	if err != nil {
		return nil, err
	}
	secret, hash := NewSecret(k)
	k.Prefix, k.SecretHash = PrefixOf(secret), hash
	redeemed := store.NewItem(store.Key{PK: "ctk#" + c.ID, SK: "redeemed"})
	redeemed["accountId"] = accountID
	redeemed[store.AttrExpiresAt] = c.ExpiresAt + 86400 // kept past the token's own expiry
	ops := []store.Op{store.PutOp(redeemed, store.NotExists())}
	ops = append(ops, credits.OpenAccountOps(accountID, c.CreditsMicro, "credit token "+c.ID, now)...)
	ops = append(ops, r.keyOps(k)...)
	err = idempotency.Transact(ctx, r.st, ops, func(i int) error {
		if i == 0 {
			return apierr.New(apierr.InvalidCreditToken, "The credit token has already been redeemed.")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("keys: create account: %w", err)
	}
	k.Status = "active"
	return &Created{Key: k, Secret: secret}, nil
}

func (r *Repo) keyOps(k *Key) []store.Op {
	idx := store.NewItem(indexKey(k.AccountID, k.Path()))
	idx["keyId"] = k.ID
	return []store.Op{store.PutOp(encode(k), store.NotExists()), store.PutOp(idx, store.NotExists())}
}

// CreateChild creates a key under chain's last key. The transaction also
// checks that no key of the chain has been revoked meanwhile, so a child can
// never appear under a key whose revocation has already answered.
func (r *Repo) CreateChild(ctx context.Context, chain []*Key, req CreateKeyRequest, projectOK ProjectCheck) (*Created, error) {
	parent := chain[len(chain)-1]
	k, err := Build(chain, parent.AccountID, req, r.now(), projectOK)
	if err != nil {
		return nil, err
	}
	secret, hash := NewSecret(k)
	k.Prefix, k.SecretHash = PrefixOf(secret), hash
	ops := r.keyOps(k)
	for _, a := range chain {
		ops = append(ops, store.CheckOp(recordKey(a.ID), store.Exists(), store.AttrNotExists(attrRevokedAt)))
	}
	err = idempotency.Transact(ctx, r.st, ops, func(i int) error {
		if i >= 2 {
			return apierr.New(apierr.KeyRevoked, "The API key or one of its ancestors has been revoked.")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("keys: create child: %w", err)
	}
	k.Status = "active"
	return &Created{Key: k, Secret: secret}, nil
}

// Authenticate resolves a bearer secret to its chain (root first, the key
// last) and its account's item, in one batch read: the key, every ancestor
// and the account, read on every call so that revocation and expiry act at
// once. Errors are apierr 401s.
func (r *Repo) Authenticate(ctx context.Context, secret string) ([]*Key, store.Item, error) {
	h, ok := ParseSecret(secret)
	if !ok {
		return nil, nil, errInvalidKey()
	}
	want := []store.Key{recordKey(h.KeyID), accounts.Key(h.AccountID)}
	for _, a := range h.Ancestors {
		want = append(want, recordKey(a))
	}
	got, err := r.st.BatchGet(ctx, want)
	if err != nil {
		return nil, nil, fmt.Errorf("keys: authenticate: %w", err)
	}
	it, ok := got[want[0].String()]
	if !ok {
		return nil, nil, errInvalidKey()
	}
	k, err := decode(it)
	if err != nil {
		return nil, nil, err
	}
	account, ok := got[want[1].String()]
	if !k.Matches(secret) || !ok || k.AccountID != h.AccountID || !slices.Equal(k.Ancestors, h.Ancestors) {
		return nil, nil, errInvalidKey()
	}
	chain := make([]*Key, 0, len(h.Ancestors)+1)
	for _, wk := range want[2:] {
		ai, ok := got[wk.String()]
		if !ok {
			return nil, nil, errInvalidKey()
		}
		a, err := decode(ai)
		if err != nil {
			return nil, nil, err
		}
		chain = append(chain, a)
	}
	chain = append(chain, k)
	if err := valid(chain, r.now()); err != nil {
		return nil, nil, err
	}
	return chain, account, nil
}

// errInvalidKey is the one answer to every secret that does not resolve,
// made only when needed: an error per successful request is garbage.
func errInvalidKey() error { return apierr.New(apierr.InvalidAPIKey, "The API key is not valid.") }

// valid refuses a chain with a revoked, expired or not yet valid key, in
// that order of precedence.
func valid(chain []*Key, now time.Time) error {
	for _, c := range chain {
		if c.RevokedAt != nil {
			return apierr.New(apierr.KeyRevoked, "The API key or one of its ancestors has been revoked.")
		}
	}
	for _, c := range chain {
		if c.Expired(now) {
			return apierr.New(apierr.KeyExpired, "The API key or one of its ancestors has expired.")
		}
	}
	for _, c := range chain {
		if c.NotYetValid(now) {
			return apierr.New(apierr.KeyNotYetValid, "The API key (or an ancestor) is not valid before %s.", c.NotBefore.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// TouchInterval is how stale a key's lastUsedAt may get: it is written at
// most once per interval per key, so most requests add no write.
const TouchInterval = time.Minute

// TouchDue reports whether a request by k at now should record its use:
// lastUsedAt as read with the key is absent or older than TouchInterval.
func TouchDue(k *Key, now time.Time) bool {
	return k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) >= TouchInterval
}

// Touch records that k was used at now, unless another request did so in
// the last TouchInterval: the update's condition (lastUsedAt older than
// now-TouchInterval) makes racing requests write at most once, and a lost
// race is no error.
func (r *Repo) Touch(ctx context.Context, keyID string, now time.Time) error {
	ms := now.UTC().Truncate(time.Millisecond).UnixMilli()
	_, err := r.st.Update(ctx, recordKey(keyID), store.Update{Set: map[string]any{attrLastUsedAt: ms}},
		store.Exists(), store.NumBelow(attrLastUsedAt, ms-TouchInterval.Milliseconds()+1))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("keys: touch: %w", err)
	}
	return nil
}

// Get returns key id if the caller (chain's last key) is that key or one of
// its ancestors; otherwise not_found, never a hint that it exists.
func (r *Repo) Get(ctx context.Context, caller *Key, id string) (*Key, error) {
	notFound := apierr.New(apierr.NotFound, "No such API key.")
	if !ids.Valid("key", id) {
		return nil, notFound
	}
	it, err := r.st.Get(ctx, recordKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("keys: get: %w", err)
	}
	k, err := decode(it)
	if err != nil {
		return nil, err
	}
	if k.AccountID != caller.AccountID || (k.ID != caller.ID && !slices.Contains(k.Ancestors, caller.ID)) {
		return nil, notFound
	}
	return k, nil
}

// Revoke revokes key id (the caller or a descendant). Revoking an already
// revoked key changes nothing and returns it as it is.
func (r *Repo) Revoke(ctx context.Context, caller *Key, id string) (*Key, error) {
	k, err := r.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		return k, nil
	}
	now := r.now().UTC().Truncate(time.Millisecond)
	_, err = r.st.Update(ctx, recordKey(id), store.Update{Set: map[string]any{attrRevokedAt: now.UnixMilli()}}, store.Exists(), store.AttrNotExists(attrRevokedAt))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return nil, fmt.Errorf("keys: revoke: %w", err)
	}
	return r.Get(ctx, caller, id)
}

// List returns the caller and its descendants in tree order, a page at a time.
func (r *Repo) List(ctx context.Context, chain []*Key, limit int, cursor string) ([]*Key, string, error) {
	caller := chain[len(chain)-1]
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	page, err := r.st.Query(ctx, store.Query{PK: "acct#" + caller.AccountID, Prefix: "key#" + caller.Path(), After: after, Limit: limit})
	if err != nil {
		return nil, "", fmt.Errorf("keys: list: %w", err)
	}
	wanted := make([]store.Key, 0, len(page.Items))
	for _, it := range page.Items {
		wanted = append(wanted, recordKey(it.String("keyId")))
	}
	known := map[string]*Key{}
	for _, c := range chain {
		known[c.ID] = c
	}
	out, err := r.fetch(ctx, wanted, known)
	if err != nil {
		return nil, "", err
	}
	// Intermediate ancestors on other pages decide the effective status too.
	var missing []store.Key
	for _, k := range out {
		for _, a := range k.Ancestors {
			if known[a] == nil {
				missing = append(missing, recordKey(a))
				known[a] = &Key{}
			}
		}
	}
	if _, err := r.fetch(ctx, missing, known); err != nil {
		return nil, "", err
	}
	now := r.now()
	for _, k := range out {
		k.Status = effectiveStatus(k, known, now)
	}
	next := ""
	if page.More && len(page.Items) > 0 {
		next = paging.Cursor(page.Items[len(page.Items)-1].Key().SK)
	}
	return out, next, nil
}

func (r *Repo) fetch(ctx context.Context, wanted []store.Key, known map[string]*Key) ([]*Key, error) {
	if len(wanted) == 0 {
		return nil, nil
	}
	got, err := r.st.BatchGet(ctx, wanted)
	if err != nil {
		return nil, fmt.Errorf("keys: fetch: %w", err)
	}
	out := make([]*Key, 0, len(wanted))
	for _, w := range wanted {
		it, ok := got[w.String()]
		if !ok {
			continue
		}
		k, err := decode(it)
		if err != nil {
			return nil, err
		}
		known[k.ID] = k
		out = append(out, k)
	}
	return out, nil
}

// EffectiveStatus of a key given its chain (root first, key last).
func EffectiveStatus(chain []*Key, now time.Time) string {
	known := map[string]*Key{}
	for _, c := range chain {
		known[c.ID] = c
	}
	return effectiveStatus(chain[len(chain)-1], known, now)
}

func effectiveStatus(k *Key, known map[string]*Key, now time.Time) string {
	status := "active"
	for _, id := range append(append([]string{}, k.Ancestors...), k.ID) {
		a := known[id]
		if a == nil {
			continue
		}
		if a.RevokedAt != nil {
			return "revoked"
		}
		if a.Expired(now) {
			status = "expired"
		}
	}
	return status
}
