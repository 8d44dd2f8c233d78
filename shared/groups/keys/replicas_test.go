package keys

import (
	"context"
	"errors"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/groups/credits/credittoken"
)

// account makes an account with a root key and a child on st, and returns
// the repo, the root's chain and the child's secret.
// repoOn is the repository a process builds on st: authentication reads
// through the store's shared reads where it offers them.
func repoOn(st store.Store, now func() time.Time) *Repo {
	sr, _ := st.(store.SharedReader)
	return NewAuthRepo(st, sr, now)
}

func account(t *testing.T, st store.Store, now func() time.Time) (*Repo, []*Key, string) {
	t.Helper()
	ctx := context.Background()
	r := repoOn(st, now)
	root, err := r.CreateAccount(ctx, credittoken.Claims{ID: "ctk_replicas", CreditsMicro: 1, ExpiresAt: now().Add(time.Hour).Unix()}, CreateKeyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	child, err := r.CreateChild(ctx, []*Key{root.Key}, CreateKeyRequest{}, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	return r, []*Key{root.Key}, child.Secret
}

func codeOf(err error) apierr.Code {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// copies returns every copy of key id's record as stored.
func copies(t *testing.T, st store.Store, id string) []store.Item {
	t.Helper()
	var out []store.Item
	for c := range Replicas {
		it, err := st.Get(context.Background(), replicaKey(id, c))
		if err != nil {
			t.Fatalf("copy %d of %s: %v", c, id, err)
		}
		out = append(out, it)
	}
	return out
}

// refused authenticates 64 times: authentication reads the copies in turn,
// so every copy is read, and each must refuse.
func refused(t *testing.T, r *Repo, secret string, want apierr.Code) {
	t.Helper()
	for range 64 {
		if _, err := r.AuthenticateChain(context.Background(), secret); codeOf(err) != want {
			t.Fatalf("authenticate: %v; want %s from every copy", err, want)
		}
	}
}

func TestRevocationIsOnEveryCopyWhenItAnswers(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			r, root, secret := account(t, st, time.Now)
			h, _ := ParseSecret(secret)
			// Every copy is read before, so the embedded store caches each.
			for range 2 * Replicas {
				if _, err := r.AuthenticateChain(context.Background(), secret); err != nil {
					t.Fatalf("before revocation: %v", err)
				}
			}
			if _, err := r.Revoke(context.Background(), root[0], h.KeyID); err != nil {
				t.Fatal(err)
			}
			for c, it := range copies(t, st, h.KeyID) {
				if !it.Has(attrRevokedAt) {
					t.Fatalf("copy %d is not revoked", c)
				}
			}
			refused(t, r, secret, apierr.KeyRevoked)
		})
	}
}

func TestAnAncestorsRevocationActsThroughEveryCopy(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			r, root, secret := account(t, b.Open(t, time.Now), time.Now)
			if _, err := r.Revoke(context.Background(), root[0], root[0].ID); err != nil {
				t.Fatal(err)
			}
			refused(t, r, secret, apierr.KeyRevoked)
		})
	}
}

// A key made before copies existed has only its record: authentication
// falls back to it, and revocation and last use write it alone.
func TestAKeyWithoutCopiesAuthenticatesFromItsRecord(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t, time.Now)
			r, root, secret := account(t, st, time.Now)
			h, _ := ParseSecret(secret)
			for _, id := range []string{h.KeyID, root[0].ID} {
				for c := 1; c < Replicas; c++ {
					if err := st.Delete(ctx, replicaKey(id, c)); err != nil {
						t.Fatal(err)
					}
				}
			}
			for range 32 {
				if _, err := r.AuthenticateChain(ctx, secret); err != nil {
					t.Fatalf("a key without copies: %v", err)
				}
			}
			if err := r.Touch(ctx, h.KeyID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Revoke(ctx, root[0], h.KeyID); err != nil {
				t.Fatal(err)
			}
			refused(t, r, secret, apierr.KeyRevoked)
			if _, err := st.Get(ctx, replicaKey(h.KeyID, 1)); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("revoking a key without copies made one: %v", err)
			}
		})
	}
}

// Last use is on every copy, so that no copy read within the minute makes
// its request touch again.
func TestLastUseIsWrittenOnEveryCopy(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			r, _, secret := account(t, st, time.Now)
			h, _ := ParseSecret(secret)
			now := time.Now()
			if err := r.Touch(context.Background(), h.KeyID, now); err != nil {
				t.Fatal(err)
			}
			for c, it := range copies(t, st, h.KeyID) {
				k, err := decode(it)
				if err != nil || k.LastUsedAt == nil || TouchDue(k, now.Add(30*time.Second)) {
					t.Fatalf("copy %d: %v, %v; want last use recorded", c, k, err)
				}
			}
		})
	}
}

// A roll sets the old key's expiry on every copy: the old secret stops
// working at that time whichever copy a request reads.
func TestARollIsOnEveryCopyOfTheOldKey(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, time.Now)
			clock := time.Now()
			now := func() time.Time { return clock }
			r, root, secret := account(t, st, now)
			h, _ := ParseSecret(secret)
			rolled, err := r.Roll(context.Background(), root[0], h.KeyID, clock.Add(time.Hour), nil)
			if err != nil {
				t.Fatal(err)
			}
			for c, it := range copies(t, st, h.KeyID) {
				k, err := decode(it)
				if err != nil || k.RolledTo == nil || *k.RolledTo != rolled.Key.ID || k.ExpiresAt == nil {
					t.Fatalf("copy %d: %+v, %v; want rolled into %s with an expiry", c, k, err, rolled.Key.ID)
				}
			}
			clock = clock.Add(2 * time.Hour)
			refused(t, r, secret, apierr.KeyExpired)
		})
	}
}

// Authentication may read items the store shares with later reads; the
// account item it answers is its caller's to change.
func TestChangingTheAuthenticatedAccountChangesNoLaterAuthentication(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			r, _, secret := account(t, b.Open(t, time.Now), time.Now)
			for range 2 {
				_, acct, err := r.Authenticate(ctx, secret)
				if err != nil {
					t.Fatal(err)
				}
				if acct.Int(accounts.AttrBalance) != 1 {
					t.Fatalf("account %v; want the balance as granted", acct)
				}
				acct[accounts.AttrBalance] = int64(99)
			}
		})
	}
}
