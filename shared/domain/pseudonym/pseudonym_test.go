package pseudonym_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/pseudonym"
)

// counting counts the storage round trips a keeper makes.
type counting struct {
	store.Store
	reads, writes atomic.Int32
}

func (c *counting) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.reads.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *counting) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	c.writes.Add(1)
	return c.Store.Put(ctx, it, conds...)
}

type fixture struct {
	st     *counting
	sealer *localkey.Sealer
}

func forEachBackend(t *testing.T, test func(t *testing.T, f fixture)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			sealer, err := localkey.Open(filepath.Join(t.TempDir(), "master.key"))
			if err != nil {
				t.Fatal(err)
			}
			test(t, fixture{st: &counting{Store: b.Open(t, time.Now)}, sealer: sealer})
		})
	}
}

func of(t *testing.T, k *pseudonym.Keeper, account, endUser string) string {
	t.Helper()
	p, err := k.Of(context.Background(), account, endUser)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// unkeyed is the pseudonym as it was first made: a plain hash of the account id
// and the end user, which anyone knowing the account id can recompute.
func unkeyed(account, endUser string) string {
	h := sha256.Sum256([]byte(account + "\x00" + endUser))
	return "anon_" + hex.EncodeToString(h[:10])
}

// A pseudonym is stable for one account and end user, across processes
// (keepers) sharing the store; it differs across accounts for the same end
// user and between end users; and it is not the old unkeyed hash.
func TestThePseudonymIsKeyedPerAccount(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		a, b := ids.New("acct", time.Now()), ids.New("acct", time.Now())
		first, second := pseudonym.New(f.st, f.sealer), pseudonym.New(f.st, f.sealer)
		p := of(t, first, a, "user-42")
		for _, tc := range []struct {
			name  string
			other string
			same  bool
		}{
			{"StableInOneProcess", of(t, first, a, "user-42"), true},
			{"StableAcrossProcesses", of(t, second, a, "user-42"), true},
			{"DiffersAcrossAccounts", of(t, second, b, "user-42"), false},
			{"DiffersAcrossEndUsers", of(t, first, a, "user-43"), false},
			{"IsNotTheUnkeyedHash", unkeyed(a, "user-42"), false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if (tc.other == p) != tc.same {
					t.Fatalf("%s vs %s: same = %v, want %v", p, tc.other, tc.other == p, tc.same)
				}
			})
		}
		if !strings.HasPrefix(p, pseudonym.Prefix) || len(p) != len(pseudonym.Prefix)+20 || strings.Contains(p, "user-42") {
			t.Fatalf("pseudonym %q", p)
		}
	})
}

// The account's secret is stored sealed, bound to the account: the raw
// item holds it in no encoding, it opens only with its account's binding,
// and it is the HMAC key the pseudonyms are made with.
func TestTheSecretIsStoredSealedAndBoundToItsAccount(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		a := ids.New("acct", time.Now())
		p := of(t, pseudonym.New(f.st, f.sealer), a, "user-42")
		it, err := f.st.Get(ctx, store.Key{PK: "acct#" + a, SK: "pseudonym-key"})
		if err != nil {
			t.Fatal(err)
		}
		sealed := it.Bytes("sealed")
		if _, err := f.sealer.Open(ctx, sealed, []byte("pseudonym-key\x00"+ids.New("acct", time.Now()))); err == nil {
			t.Fatal("the sealed secret opens under another account's binding")
		}
		secret, err := f.sealer.Open(ctx, sealed, []byte("pseudonym-key\x00"+a))
		if err != nil {
			t.Fatal(err)
		}
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("user-42"))
		if want := pseudonym.Prefix + hex.EncodeToString(m.Sum(nil)[:10]); p != want || len(secret) != 32 {
			t.Fatalf("pseudonym %s, want HMAC under the stored secret %s", p, want)
		}
		raw := []byte(it.Key().String() + string(sealed))
		for name, enc := range map[string][]byte{"raw": secret, "hex": []byte(hex.EncodeToString(secret)),
			"base64": []byte(base64.StdEncoding.EncodeToString(secret)), "base64url": []byte(base64.RawURLEncoding.EncodeToString(secret))} {
			if bytes.Contains(raw, enc) {
				t.Fatalf("the stored item holds the secret in %s", name)
			}
		}
		for attr, v := range it {
			if s, ok := v.(string); ok && strings.Contains(s, "user-42") {
				t.Fatalf("attribute %s holds the end user", attr)
			}
		}
	})
}

// The hot path: the first use in a process costs one read and at most one
// write; later uses, for any end user of the account, none.
func TestAfterTheFirstUseAPseudonymCostsNoStorageRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		a := ids.New("acct", time.Now())
		first := pseudonym.New(f.st, f.sealer)
		of(t, first, a, "user-1")
		if r, w := f.st.reads.Load(), f.st.writes.Load(); r != 1 || w != 1 {
			t.Fatalf("creating the secret took %d reads and %d writes, want 1 and 1", r, w)
		}
		for i := range 50 {
			of(t, first, a, "user-"+string(rune('a'+i%26)))
		}
		second := pseudonym.New(f.st, f.sealer)
		of(t, second, a, "user-1")
		of(t, second, a, "user-2")
		if r, w := f.st.reads.Load(), f.st.writes.Load(); r != 2 || w != 1 {
			t.Fatalf("after the first use: %d reads and %d writes in all, want 2 and 1 (one read by the second process)", r, w)
		}
	})
}

// Processes creating an account's secret at once agree on one: the losers
// of the conditional write read the winner's.
func TestConcurrentFirstUsesAgreeOnOneSecret(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		a := ids.New("acct", time.Now())
		got := make([]string, 8)
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := pseudonym.New(f.st, f.sealer).Of(context.Background(), a, "user-42")
				if err != nil {
					t.Error(err)
				}
				got[i] = p
			}()
		}
		wg.Wait()
		for _, p := range got {
			if p != got[0] {
				t.Fatalf("pseudonyms disagree: %v", got)
			}
		}
	})
}
