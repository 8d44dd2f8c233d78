// Package pseudonym makes the end-user pseudonyms of the pseudonymous
// privacy tier (keys.TierPseudonymous): HMAC-SHA-256 of the end-user id
// under a secret of the account (docs/keys.md, privacy tiers).
// An unkeyed hash of the account id and the end user would let anyone who
// knows the account id test guesses against a log line; the key keeps one
// user's records correlated within the account and nothing else.
//
// Storage (single table, in the account's partition):
//
//	acct#<acct> | pseudonym-key   "sealed": 32 random bytes sealed by the
//	                              envelope port, associated data binding
//	                              them to the account
//
// The secret is created on first use, opened once per process and kept in
// a bounded LRU: it never changes, so after the first use a request costs
// no storage round trip.
package pseudonym

import (
	"container/list"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/store"
)

// Prefix starts every pseudonym, so a reader tells one from an id as sent.
const Prefix = "anon_"

// CacheSize bounds the opened account secrets a process keeps: 32 bytes
// each, plus the account id and list overhead.
const CacheSize = 4096

const attrSealed = "sealed"

func itemKey(accountID string) store.Key {
	return store.Key{PK: "acct#" + accountID, SK: "pseudonym-key"}
}

// binding is the associated data of an account's sealed secret: a sealed
// secret copied to another account's item does not open there.
func binding(accountID string) []byte { return []byte("pseudonym-key\x00" + accountID) }

// Keeper computes pseudonyms. It is safe for concurrent use.
type Keeper struct {
	st     store.Store
	sealer envelope.Sealer

	mu    sync.Mutex
	order *list.List               // most recently used first; values are *entry
	byAcc map[string]*list.Element // account id -> element of order
}

type entry struct {
	account string
	secret  []byte
}

// New builds a keeper on the item store and the envelope port.
func New(st store.Store, sealer envelope.Sealer) *Keeper {
	return &Keeper{st: st, sealer: sealer, order: list.New(), byAcc: map[string]*list.Element{}}
}

// Of returns the pseudonym of endUser in the account: Prefix and the first
// 80 bits of HMAC-SHA-256(account secret, endUser), in hex.
func (k *Keeper) Of(ctx context.Context, accountID, endUser string) (string, error) {
	secret, err := k.secret(ctx, accountID)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(endUser))
	return Prefix + hex.EncodeToString(m.Sum(nil)[:10]), nil
}

// secret returns the account's secret: from the cache, else read and
// opened, else created. Two processes creating it at once both try a
// conditional put; the loser reads the winner's.
func (k *Keeper) secret(ctx context.Context, accountID string) ([]byte, error) {
	if s := k.cached(accountID); s != nil {
		return s, nil
	}
	s, err := k.read(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		s, err = k.create(ctx, accountID)
		if errors.Is(err, store.ErrConditionFailed) {
			s, err = k.read(ctx, accountID)
		}
	}
	if err != nil {
		return nil, err
	}
	k.remember(accountID, s)
	return s, nil
}

func (k *Keeper) read(ctx context.Context, accountID string) ([]byte, error) {
	it, err := k.st.Get(ctx, itemKey(accountID))
	if err != nil {
		return nil, err
	}
	s, err := k.sealer.Open(ctx, it.Bytes(attrSealed), binding(accountID))
	if err != nil {
		return nil, fmt.Errorf("pseudonym: open the secret of %s: %w", accountID, err)
	}
	return s, nil
}

func (k *Keeper) create(ctx context.Context, accountID string) ([]byte, error) {
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		return nil, fmt.Errorf("pseudonym: random: %w", err)
	}
	sealed, err := k.sealer.Seal(ctx, s, binding(accountID))
	if err != nil {
		return nil, fmt.Errorf("pseudonym: seal the secret of %s: %w", accountID, err)
	}
	it := store.NewItem(itemKey(accountID))
	it[attrSealed] = sealed
	if err := k.st.Put(ctx, it, store.NotExists()); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, err
		}
		return nil, fmt.Errorf("pseudonym: store the secret of %s: %w", accountID, err)
	}
	return s, nil
}

func (k *Keeper) cached(accountID string) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	el, ok := k.byAcc[accountID]
	if !ok {
		return nil
	}
	k.order.MoveToFront(el)
	return el.Value.(*entry).secret
}

func (k *Keeper) remember(accountID string, secret []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if el, ok := k.byAcc[accountID]; ok {
		k.order.MoveToFront(el)
		return
	}
	k.byAcc[accountID] = k.order.PushFront(&entry{account: accountID, secret: secret})
	if k.order.Len() > CacheSize {
		oldest := k.order.Back()
		k.order.Remove(oldest)
		delete(k.byAcc, oldest.Value.(*entry).account)
	}
}
