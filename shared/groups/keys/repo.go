package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/limits"
	"platformapi/shared/domain/paging"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/credittoken"
)

// Storage layout (single table):
//
//	key#<id>      | key            the record; revokedAt as its own attribute
//	key#<id>#<r>  | key            replica r (1 … Replicas-1) of the record
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

// Replicas is how many copies of each key record there are, the record
// itself included. DynamoDB serves one item at most 3,000 strongly
// consistent reads a second, and authentication reads the key and every
// ancestor on every request (revocation must act on the next one), so one
// record would cap a key, and a root the whole account under it, at 3,000
// requests a second. Authentication reads one copy of each, in turn; every
// write of a record (creation, revocation, roll, last use) writes all copies
// in one transaction, so a revocation is on every copy when it answers. A
// key made before replicas has only the record, which authentication then
// reads instead.
const Replicas = 8

// replicaKey is copy r of key id's record; copy 0 is the record.
func replicaKey(id string, r int) store.Key {
	if r == 0 {
		return recordKey(id)
	}
	return store.Key{PK: "key#" + id + "#" + strconv.Itoa(r), SK: "key"}
}

// replicaOps are the puts of every copy of a new record but the record.
func replicaOps(rec store.Item) []store.Op {
	ops := make([]store.Op, 0, Replicas-1)
	id := strings.TrimPrefix(rec.Key().PK, "key#")
	for r := 1; r < Replicas; r++ {
		c := maps.Clone(rec)
		k := replicaKey(id, r)
		c[store.AttrPK], c[store.AttrSK] = k.PK, k.SK
		ops = append(ops, store.PutOp(c, store.NotExists()))
	}
	return ops
}

// readCopy reads one copy of key id's record (the next in turn), or the
// record of a key made before replicas.
func (r *Repo) readCopy(ctx context.Context, id string) (store.Item, error) {
	c := int(r.turn.Add(1) % Replicas)
	it, err := r.st.Get(ctx, replicaKey(id, c))
	if errors.Is(err, store.ErrNotFound) && c != 0 {
		return r.st.Get(ctx, recordKey(id))
	}
	return it, err
}

// replicated reports whether key id has copies (it was made after them).
func (r *Repo) replicated(ctx context.Context, id string) (bool, error) {
	_, err := r.st.Get(ctx, replicaKey(id, 1))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("keys: replicas of %s: %w", id, err)
}

// updateAll applies u to key id's record under conds and to each of its
// copies, in one transaction. A failed condition of the record is
// ErrConditionFailed.
func (r *Repo) updateAll(ctx context.Context, id string, u store.Update, conds ...store.Cond) error {
	ok, err := r.replicated(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		_, err := r.st.Update(ctx, recordKey(id), u, conds...)
		return err
	}
	return r.st.Transact(ctx, append([]store.Op{store.UpdateOp(recordKey(id), u, conds...)}, replicaUpdates(id, u)...))
}

// replicaUpdates are u on every copy of key id's record but the record.
func replicaUpdates(id string, u store.Update) []store.Op {
	ops := make([]store.Op, 0, Replicas-1)
	for r := 1; r < Replicas; r++ {
		ops = append(ops, store.UpdateOp(replicaKey(id, r), u, store.Exists()))
	}
	return ops
}

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
		// JSON leaves spare capacity in slices: clipped, an append to one
		// (by any holder of a shared key) copies instead of writing into
		// what other keys share.
		tmpl.Scopes, tmpl.AllowedServices = slices.Clip(tmpl.Scopes), slices.Clip(tmpl.AllowedServices)
		tmpl.AllowedOperations, tmpl.AllowedIPs = slices.Clip(tmpl.AllowedOperations), slices.Clip(tmpl.AllowedIPs)
		tmpl.Ancestors, tmpl.SecretHash = slices.Clip(tmpl.Ancestors), slices.Clip(tmpl.SecretHash)
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
	st store.Store
	// shared reads the chain uncopied where the process offers it; nil
	// reads copies.
	shared store.SharedReader
	now    func() time.Time
	// turn picks the copies a read takes: in turn from a random start, so
	// one process spreads its reads of a hot key evenly over the copies
	// (random picks would leave some copies busier), and processes do not
	// move in step.
	turn atomic.Uint64
}

// NewRepo builds a key repository on the item store.
func NewRepo(st store.Store, now func() time.Time) *Repo { return NewAuthRepo(st, nil, now) }

// NewAuthRepo is NewRepo whose authentication reads the chain through
// shared (the same items as st, uncopied; see store.SharedReader), or
// copies from st when shared is nil.
func NewAuthRepo(st store.Store, shared store.SharedReader, now func() time.Time) *Repo {
	r := &Repo{st: st, shared: shared, now: now}
	r.turn.Store(mrand.Uint64())
	return r
}

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
	rec := encode(k)
	return append([]store.Op{store.PutOp(rec, store.NotExists()), store.PutOp(idx, store.NotExists())}, replicaOps(rec)...)
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
	made := len(ops)
	for _, a := range chain {
		ops = append(ops, store.CheckOp(recordKey(a.ID), store.Exists(), store.AttrNotExists(attrRevokedAt)))
	}
	err = idempotency.Transact(ctx, r.st, ops, func(i int) error {
		if i >= made {
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
// once. Errors are apierr 401s. The keys may be shared with other requests
// (see authCache): read them, never write to them.
func (r *Repo) Authenticate(ctx context.Context, secret string) ([]*Key, store.Item, error) {
	return r.authenticate(ctx, secret, true)
}

// AuthenticateChain is Authenticate without the account item, for requests
// that do not need it: the account item is one per account, so reading it
// on every request would cap an account at 3,000 requests a second.
func (r *Repo) AuthenticateChain(ctx context.Context, secret string) ([]*Key, error) {
	chain, _, err := r.authenticate(ctx, secret, false)
	return chain, err
}

func (r *Repo) authenticate(ctx context.Context, secret string, withAccount bool) ([]*Key, store.Item, error) {
	var ancestors [MaxDepth]string
	h, ok := splitSecret(secret, ancestors[:0])
	if !ok {
		return nil, nil, errInvalidKey()
	}
	if r.shared != nil {
		return r.authenticateShared(ctx, r.shared, secret, h, withAccount)
	}
	if !h.valid() {
		return nil, nil, errInvalidKey()
	}
	return r.authenticateCopied(ctx, secret, h, withAccount)
}

// authenticateCopied reads the chain as copies, on any store.
func (r *Repo) authenticateCopied(ctx context.Context, secret string, h Hint, withAccount bool) ([]*Key, store.Item, error) {
	// ids[i] is read from want[i]: one copy of the key and of each
	// ancestor (the next in turn), then the account. names[i] is
	// want[i].String(), made once: it is how the batch names its items.
	ids := append([]string{h.KeyID}, h.Ancestors...)
	want := make([]store.Key, len(ids), len(ids)+1)
	copies := make([]int, len(ids))
	turn := r.turn.Add(1)
	for i, id := range ids {
		copies[i] = int((turn + uint64(i)) % Replicas)
		want[i] = replicaKey(id, copies[i])
	}
	if withAccount {
		want = append(want, accounts.Key(h.AccountID))
	}
	names := make([]string, len(want))
	for i, k := range want {
		names[i] = k.String()
	}
	got, err := r.st.BatchGet(ctx, want)
	if err != nil {
		return nil, nil, fmt.Errorf("keys: authenticate: %w", err)
	}
	// A key made before replicas has only its record.
	var legacy []store.Key
	for i := range ids {
		if _, ok := got[names[i]]; !ok && copies[i] != 0 {
			want[i] = recordKey(ids[i])
			names[i] = want[i].String()
			legacy = append(legacy, want[i])
		}
	}
	if len(legacy) > 0 {
		more, err := r.st.BatchGet(ctx, legacy)
		if err != nil {
			return nil, nil, fmt.Errorf("keys: authenticate: %w", err)
		}
		maps.Copy(got, more)
	}
	it, ok := got[names[0]]
	if !ok {
		return nil, nil, errInvalidKey()
	}
	k, err := decode(it)
	if err != nil {
		return nil, nil, err
	}
	var account store.Item
	if withAccount {
		account, ok = got[names[len(ids)]]
	}
	if !k.Matches(secret) || !ok || k.AccountID != h.AccountID || !slices.Equal(k.Ancestors, h.Ancestors) {
		return nil, nil, errInvalidKey()
	}
	chain := make([]*Key, 0, len(ids))
	for _, name := range names[1:len(ids)] {
		ai, ok := got[name]
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

// authenticateShared is authentication on a store that shares its items:
// the same reads and checks as authenticateCopied, with the names of the
// chain's items and the decoded keys taken from authCached (exact, see
// authCache).
func (r *Repo) authenticateShared(ctx context.Context, sr store.SharedReader, secret string, h Hint, withAccount bool) ([]*Key, store.Item, error) {
	// A cached plan names the ids of a chain that authenticated: a secret
	// naming the same ids needs no check of their form.
	p, cached := authCached.plan(h)
	if !cached && !h.valid() {
		return nil, nil, errInvalidKey()
	}
	turn := int(r.turn.Add(1) % Replicas)
	n := 1 + len(h.Ancestors)
	want, names := p.want[turn][:n:n], p.names[turn]
	if withAccount {
		want = p.want[turn][: n+1 : n+1]
	}
	got, err := sr.BatchGetShared(ctx, want)
	if err != nil {
		return nil, nil, fmt.Errorf("keys: authenticate: %w", err)
	}
	var account store.Item
	if withAccount {
		var ok bool
		if account, ok = got[names[n]]; !ok {
			return nil, nil, errInvalidKey()
		}
	}
	names, err = readRecords(ctx, sr, h, turn, names[:n], got)
	if err != nil {
		return nil, nil, err
	}
	// chain is root first: names[1:] are the ancestors, root first, and
	// names[0] the key itself.
	chain := make([]*Key, n)
	for i := range n {
		it, ok := got[names[i]]
		if !ok {
			return nil, nil, errInvalidKey()
		}
		k, err := authCached.key(names[i], it)
		if err != nil {
			return nil, nil, err
		}
		chain[(i+n-1)%n] = k
	}
	k := chain[n-1]
	if !k.Matches(secret) || k.AccountID != h.AccountID || !slices.Equal(k.Ancestors, h.Ancestors) {
		return nil, nil, errInvalidKey()
	}
	if err := valid(chain, r.now()); err != nil {
		return nil, nil, err
	}
	if !cached {
		authCached.keep(h.KeyID, p)
	}
	if account != nil {
		// The store's own item: the caller may change it.
		account = account.Clone()
	}
	return chain, account, nil
}

// readRecords reads into got the record of each key of h's chain whose
// copy (of turn) was missing: a key made before replicas has only its
// record. It returns the names to read the chain's items by, names itself
// when nothing was missing (the plan's, never changed).
func readRecords(ctx context.Context, sr store.SharedReader, h Hint, turn int, names []string, got map[string]store.Item) ([]string, error) {
	var legacy []store.Key
	out := names
	for i, name := range names {
		if _, ok := got[name]; ok || (turn+i)%Replicas == 0 {
			continue
		}
		if legacy == nil {
			out = slices.Clone(names)
		}
		id := h.KeyID
		if i > 0 {
			id = h.Ancestors[i-1]
		}
		legacy = append(legacy, recordKey(id))
		out[i] = legacy[len(legacy)-1].String()
	}
	if len(legacy) == 0 {
		return names, nil
	}
	more, err := sr.BatchGetShared(ctx, legacy)
	if err != nil {
		return nil, fmt.Errorf("keys: authenticate: %w", err)
	}
	maps.Copy(got, more)
	return out, nil
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
	// Every copy: a copy whose lastUsedAt stayed old would make each
	// request that reads it touch again.
	err := r.updateAll(ctx, keyID, store.Update{Set: map[string]any{attrLastUsedAt: ms}},
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
	it, err := r.readCopy(ctx, id)
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
	err = r.updateAll(ctx, id, store.Update{Set: map[string]any{attrRevokedAt: now.UnixMilli()}}, store.Exists(), store.AttrNotExists(attrRevokedAt))
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
