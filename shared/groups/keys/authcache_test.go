package keys

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/limits"
)

// cachedChain makes an account with a key at depth 3 on the embedded store
// (the store that shares its items, so authentication decodes through
// authCached) and returns the repo, the chain and the leaf's
// secret. The leaf expires at expires.
func cachedChain(t *testing.T, now func() time.Time, expires time.Time) (*Repo, []*Key, string) {
	t.Helper()
	st := teststores.Embedded.Open(t, now)
	if _, ok := st.(store.SharedReader); !ok {
		t.Fatal("the embedded store no longer shares its items: these tests would not reach the decoded cache")
	}
	r, root, mid := account(t, st, now)
	midChain, err := r.AuthenticateChain(context.Background(), mid)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := r.CreateChild(context.Background(), midChain, CreateKeyRequest{ExpiresAt: &expires, Limits: limits.Set{"*": rpm(100)}}, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	return r, append(append(root, midChain[len(midChain)-1]), leaf.Key), leaf.Secret
}

func rpm(n int64) limits.Limit { return limits.Limit{RequestsPerMinute: &n} }

// warm authenticates secret twice on every copy, and checks that the
// second round answered the very keys the first decoded: the cache is on.
func warm(t *testing.T, r *Repo, secret string) []*Key {
	t.Helper()
	var chains [2 * Replicas][]*Key
	for i := range chains {
		chain, err := r.AuthenticateChain(context.Background(), secret)
		if err != nil {
			t.Fatalf("authenticate: %v", err)
		}
		chains[i] = chain
	}
	for i := range Replicas {
		for j, k := range chains[i] {
			if chains[i+Replicas][j] != k {
				t.Fatalf("copy %d, key %d decoded again: the decoded cache is not on", i, j)
			}
		}
	}
	return chains[0]
}

func TestRevocationActsOnTheNextRequestWithTheDecodedCacheWarm(t *testing.T) {
	for depth, name := range []string{"root", "parent", "key itself"} {
		t.Run(name, func(t *testing.T) {
			r, chain, secret := cachedChain(t, time.Now, time.Now().Add(time.Hour))
			warm(t, r, secret)
			if _, err := r.Revoke(context.Background(), chain[0], chain[depth].ID); err != nil {
				t.Fatal(err)
			}
			refused(t, r, secret, apierr.KeyRevoked)
		})
	}
}

func TestExpiryActsOnTheNextRequestWithTheDecodedCacheWarm(t *testing.T) {
	c := testclock.New(time.Now().UTC().Truncate(time.Second))
	r, _, secret := cachedChain(t, c.Now, c.Now().Add(time.Hour))
	warm(t, r, secret)
	c.Advance(time.Hour)
	refused(t, r, secret, apierr.KeyExpired)
}

// A roll rewrites the rolled key's record with an earlier expiry: every
// copy is decoded again, so the new expiry acts on the next request.
func TestARolledExpiryActsOnTheNextRequestWithTheDecodedCacheWarm(t *testing.T) {
	c := testclock.New(time.Now().UTC().Truncate(time.Second))
	r, chain, secret := cachedChain(t, c.Now, c.Now().Add(time.Hour))
	warm(t, r, secret)
	if _, err := r.Roll(context.Background(), chain[0], chain[2].ID, c.Now().Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	for range 2 * Replicas {
		got, err := r.AuthenticateChain(context.Background(), secret)
		if err != nil || got[2].RolledTo == nil || !got[2].ExpiresAt.Equal(c.Now().Add(time.Minute)) {
			t.Fatalf("after the roll: %+v, %v; want the new expiry and rolledTo on every copy", got, err)
		}
	}
	c.Advance(time.Minute)
	refused(t, r, secret, apierr.KeyExpired)
}

// A record whose document changes (here its limit) is decoded again on
// every copy; the key decoded before stays as it was.
func TestAChangedRecordIsDecodedAgain(t *testing.T) {
	r, chain, secret := cachedChain(t, time.Now, time.Now().Add(time.Hour))
	before := warm(t, r, secret)
	changed := *chain[2]
	changed.Limits = limits.Set{"*": rpm(7)}
	doc := encode(&changed)[store.AttrDoc]
	if err := r.updateAll(context.Background(), changed.ID, store.Update{Set: map[string]any{store.AttrDoc: doc}}, store.Exists()); err != nil {
		t.Fatal(err)
	}
	for range 2 * Replicas {
		got, err := r.AuthenticateChain(context.Background(), secret)
		if err != nil {
			t.Fatal(err)
		}
		if n := got[2].Limits["*"].RequestsPerMinute; n == nil || *n != 7 {
			t.Fatalf("limit after the change: %v; want 7 from every copy", got[2].Limits)
		}
	}
	if n := before[2].Limits["*"].RequestsPerMinute; n == nil || *n != 100 {
		t.Fatalf("the key decoded before the change now has %v", before[2].Limits)
	}
}

// A last use written between two requests is a new item: the next request
// sees it, so TouchDue does not ask for a write per request.
func TestALastUseActsOnTheNextRequestWithTheDecodedCacheWarm(t *testing.T) {
	r, chain, secret := cachedChain(t, time.Now, time.Now().Add(time.Hour))
	warm(t, r, secret)
	at := time.Now().UTC().Truncate(time.Millisecond)
	if err := r.Touch(context.Background(), chain[2].ID, at); err != nil {
		t.Fatal(err)
	}
	for range 2 * Replicas {
		got, err := r.AuthenticateChain(context.Background(), secret)
		if err != nil || got[2].LastUsedAt == nil || !got[2].LastUsedAt.Equal(at) || TouchDue(got[2], at) {
			t.Fatalf("after touch: %+v, %v", got, err)
		}
	}
}

// A secret that names other ancestors than its key's is refused, and
// leaves no plan behind that would misdirect the key's real secret.
func TestASecretWithEditedIdsLeavesTheKeysPlanAlone(t *testing.T) {
	r, chain, secret := cachedChain(t, time.Now, time.Now().Add(time.Hour))
	forged := secret[:len(secret)-2*(1+keyIDLen)] + "_" + chain[1].ID + "_" + chain[0].ID
	for range 2 * Replicas {
		if _, err := r.AuthenticateChain(context.Background(), forged); codeOf(err) != apierr.InvalidAPIKey {
			t.Fatalf("forged chain: %v; want invalid_api_key", err)
		}
	}
	warm(t, r, secret)
}

func TestTheAuthCacheIsBounded(t *testing.T) {
	c := newAuthCache(3)
	it := decodeFixture(t)
	for i := range 10 {
		name := fmt.Sprintf("key#%d|key", i)
		if _, err := c.key(name, it); err != nil {
			t.Fatal(err)
		}
		h := Hint{KeyID: fmt.Sprintf("key_%026d", i), AccountID: "acct_01JBENCH0000000000000000000"}
		c.keep(h.KeyID, newPlan(h))
		if len(c.keys) > 3 || len(c.plans) > 3 {
			t.Fatalf("%d keys and %d plans, bound 3", len(c.keys), len(c.plans))
		}
		if _, ok := c.keys[name]; !ok {
			t.Fatal("the newest key is missing")
		}
		if p, cached := c.plan(h); !cached || p != c.plans[h.KeyID] {
			t.Fatal("the newest plan is missing")
		}
	}
}

// Requests authenticate concurrently with writes to the chain's records
// (last use, then revocation): every answer is a whole chain or a refusal,
// and once the revocation has answered every request is refused.
func TestConcurrentAuthenticationWithTheDecodedCacheIsExact(t *testing.T) {
	r, chain, secret := cachedChain(t, time.Now, time.Now().Add(time.Hour))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := r.AuthenticateChain(ctx, secret)
				switch {
				case err == nil && (len(got) != 3 || got[2].ID != chain[2].ID || got[0].ID != chain[0].ID):
					errs <- fmt.Errorf("chain %v", got)
					return
				case err != nil && codeOf(err) != apierr.KeyRevoked:
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 20 {
		if err := r.Touch(ctx, chain[i%3].ID, time.Now().Add(time.Duration(i)*TouchInterval)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Revoke(ctx, chain[0], chain[1].ID); err != nil {
		t.Fatal(err)
	}
	refused(t, r, secret, apierr.KeyRevoked)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// The decoded cache's exactness rests on the embedded store never changing
// an item it has shared: a write answers a new map on the next read, and
// the map shared before keeps the attributes it had.
func TestTheEmbeddedStoreReplacesASharedItemOnWrite(t *testing.T) {
	r, chain, secret := cachedChain(t, time.Now, time.Now().Add(time.Hour))
	sr := r.st.(store.SharedReader)
	ctx := context.Background()
	k := recordKey(chain[2].ID)
	read := func() store.Item {
		t.Helper()
		got, err := sr.BatchGetShared(ctx, []store.Key{k})
		if err != nil || got[k.String()] == nil {
			t.Fatalf("read %s: %v, %v", k, got, err)
		}
		return got[k.String()]
	}
	before := read()
	if again := read(); !sameItem(before, again) {
		t.Fatal("two reads without a write answered different maps: the decoded cache would never hit")
	}
	if _, err := r.Revoke(ctx, chain[0], chain[2].ID); err != nil {
		t.Fatal(err)
	}
	after := read()
	if sameItem(before, after) || before.Has(attrRevokedAt) || !after.Has(attrRevokedAt) {
		t.Fatalf("after a write: same map %v, revokedAt before %v, after %v", sameItem(before, after), before.Has(attrRevokedAt), after.Has(attrRevokedAt))
	}
	refused(t, r, secret, apierr.KeyRevoked)
}

// countingReader counts the shared reads authentication asks of it.
type countingReader struct {
	store.SharedReader
	reads int
}

func (c *countingReader) BatchGetShared(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	c.reads++
	return c.SharedReader.BatchGetShared(ctx, keys)
}

// portOnly hides every method of a store but the port's.
type portOnly struct{ store.Store }

// Authentication reads through the shared reader the repository is given,
// whatever the store's concrete type: a wrapped store (a recorder, a fault
// injector) hides nothing from it.
func TestAuthenticationReadsThroughTheSharedReaderItIsGivenNotTheStoresType(t *testing.T) {
	st := teststores.Embedded.Open(t, time.Now)
	_, _, secret := account(t, st, time.Now)
	sr := &countingReader{SharedReader: st.(store.SharedReader)}
	if _, err := NewAuthRepo(portOnly{st}, sr, time.Now).AuthenticateChain(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if sr.reads == 0 {
		t.Fatal("authentication did not read through the shared reader it was given")
	}
}
