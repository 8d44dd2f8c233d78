package idempotency_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/idempotency"
)

// sealer is a real envelope key in a fresh file: another call is another
// deployment's key.
func sealer(t *testing.T) envelope.Sealer {
	t.Helper()
	s, err := localkey.Open(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eachBackend(t *testing.T, test func(t *testing.T, s *idempotency.Store, raw store.Store, c *testclock.Clock)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := testclock.New(time.Now())
			st := b.Open(t, c.Now)
			test(t, idempotency.New(st, sealer(t), c.Now, 35*time.Second), st, c)
		})
	}
}

func TestFingerprintCoversEveryPartOfTheInput(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{"X-Service-Project": {"prj_1"}, "X-Service-End-User": {"u1"}, "Content-Type": {"text/plain"},
			"X-File-Name": {"a.txt"}, "X-Content-Sha256": {"ab"}, "X-Service-File-Purpose": {"notes"}}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				h.Del(kv[i])
			} else {
				h.Set(kv[i], kv[i+1])
			}
		}
		return h
	}
	base := idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr())
	for name, fp := range map[string]string{
		"method":       idempotency.Fingerprint("PATCH", "/v1/files", []byte(`{"a":1}`), hdr()),
		"path":         idempotency.Fingerprint("POST", "/v1/files?x", []byte(`{"a":1}`), hdr()),
		"body":         idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":2}`), hdr()),
		"project":      idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr("X-Service-Project", "prj_2")),
		"end user":     idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr("X-Service-End-User", "")),
		"media type":   idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr("Content-Type", "text/html")),
		"file name":    idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr("X-File-Name", "b.txt")),
		"checksum":     idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr("X-Content-Sha256", "")),
		"purpose":      idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr("X-Service-File-Purpose", "other")),
		"second value": idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), func() http.Header { h := hdr(); h.Add("X-File-Name", "b.txt"); return h }()),
		"boundary":     idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}prj_1`), hdr("X-Service-Project", "")),
	} {
		if fp == base {
			t.Errorf("changing the %s does not change the fingerprint", name)
		}
	}
	if again := idempotency.Fingerprint("POST", "/v1/files", []byte(`{"a":1}`), hdr()); again != base {
		t.Error("the same input gives another fingerprint")
	}
}

// The stored fingerprint is an HMAC under a sealed key
// of the deployment, bound to the caller's scope: a reader of the store
// cannot test a guessed body (a connection's password) against it, nor
// link two API keys' equal requests. The key is kept in the store, so
// another process of the deployment replays; another deployment's key
// gives another fingerprint.
func TestStoredFingerprintsAreKeyed(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			c := testclock.New(time.Now())
			key := sealer(t)
			st := b.Open(t, c.Now)
			s := idempotency.New(st, key, c.Now, 35*time.Second)
			body := []byte(`{"type":"basic","credentials":{"username":"ada","password":"hunter2"}}`)
			digest := idempotency.Fingerprint("POST", "/v1/connections", body, http.Header{"Content-Type": {"application/json"}})
			plain := sha256.Sum256(body)
			stored := func(st store.Store, scope, idemKey string) string {
				t.Helper()
				it, err := st.Get(ctx, store.Key{PK: "idem#" + scope + "#" + idemKey, SK: "idem"})
				if err != nil {
					t.Fatal(err)
				}
				return it.String("fp")
			}

			claim, _, err := s.Claim(ctx, "key_a", "k-00000010", digest)
			if err != nil || claim == nil {
				t.Fatalf("claim: %v", err)
			}
			fpA := stored(st, "key_a", "k-00000010")
			if fpA == "" || fpA == digest || fpA == hex.EncodeToString(plain[:]) {
				t.Fatalf("stored fingerprint %q is the unkeyed digest of the input", fpA)
			}
			if err := s.Complete(ctx, claim, idempotency.Response{Status: 201, Body: []byte(`{"id":"con_1"}`)}); err != nil {
				t.Fatal(err)
			}
			if _, replay, err := s.Claim(ctx, "key_a", "k-00000010", digest); err != nil || replay == nil || replay.Status != 201 {
				t.Fatalf("a retry with the same input: %v %v, want the replay", replay, err)
			}
			// Another process of the deployment: same store, same envelope key.
			restarted := idempotency.New(st, key, c.Now, 35*time.Second)
			if _, replay, err := restarted.Claim(ctx, "key_a", "k-00000010", digest); err != nil || replay == nil {
				t.Fatalf("another process: %v %v, want the replay", replay, err)
			}
			if _, _, err := s.Claim(ctx, "key_a", "k-00000010", idempotency.Fingerprint("POST", "/v1/connections", body, nil)); !errors.Is(err, idempotency.ErrReused) {
				t.Fatalf("another input: %v, want ErrReused", err)
			}

			if _, _, err := s.Claim(ctx, "key_b", "k-00000010", digest); err != nil {
				t.Fatal(err)
			}
			if fpB := stored(st, "key_b", "k-00000010"); fpB == fpA {
				t.Fatal("two API keys' equal requests have equal stored fingerprints")
			}

			other := b.Open(t, c.Now)
			if _, _, err := idempotency.New(other, sealer(t), c.Now, 35*time.Second).Claim(ctx, "key_a", "k-00000010", digest); err != nil {
				t.Fatal(err)
			}
			if fpOther := stored(other, "key_a", "k-00000010"); fpOther == fpA {
				t.Fatal("two deployments with different keys store the same fingerprint")
			}
		})
	}
}

// A record stored before fingerprints were keyed holds the plain digest:
// its retry is refused as a reused key (fail safe), never run a second
// time nor answered with a response it might not own.
func TestARecordWithAnUnkeyedFingerprintFailsSafe(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *testclock.Clock) {
		ctx := context.Background()
		digest := idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"name":"a"}`), nil)
		it := store.NewItem(store.Key{PK: "idem#key_a#k-00000011", SK: "idem"})
		it["state"], it["fp"], it["token"] = "done", digest, "old"
		it["response"] = []byte(`{"status":201,"headers":{},"body":"e30="}`)
		it[store.AttrExpiresAt] = c.Now().Add(time.Hour).Unix()
		if err := raw.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
		if claim, replay, err := s.Claim(ctx, "key_a", "k-00000011", digest); !errors.Is(err, idempotency.ErrReused) {
			t.Fatalf("claim over an unkeyed record: %v %v %v, want ErrReused", claim, replay, err)
		}
	})
}

// A process without the envelope key (an AWS function not granted it)
// stores the digest as it is and still replays.
func TestWithoutAnEnvelopeKeyTheDigestIsStored(t *testing.T) {
	ctx := context.Background()
	c := testclock.New(time.Now())
	st := teststores.Embedded.Open(t, c.Now)
	s := idempotency.New(st, nil, c.Now, 35*time.Second)
	claim, _, err := s.Claim(ctx, "key_a", "k-00000012", "digest")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, claim, idempotency.Response{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if _, replay, err := s.Claim(ctx, "key_a", "k-00000012", "digest"); err != nil || replay == nil {
		t.Fatalf("%v %v, want the replay", replay, err)
	}
}

func TestClaimCompleteReplay(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *testclock.Clock) {
		ctx := context.Background()
		claim, replay, err := s.Claim(ctx, "key_a", "k-00000001", "fp1")
		if err != nil || replay != nil || claim == nil {
			t.Fatalf("first claim: %v %v", replay, err)
		}
		var busy *idempotency.InProgressError
		if _, _, err := s.Claim(ctx, "key_a", "k-00000001", "fp1"); !errors.As(err, &busy) || busy.RetryAfterSeconds < 1 {
			t.Fatalf("duplicate while running: %v", err)
		}
		if _, _, err := s.Claim(ctx, "key_a", "k-00000001", "fp2"); !errors.Is(err, idempotency.ErrReused) {
			t.Fatalf("different input while running: %v", err)
		}
		if err := s.Complete(ctx, claim, idempotency.Response{Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"id":1}`)}); err != nil {
			t.Fatal(err)
		}
		_, replay, err = s.Claim(ctx, "key_a", "k-00000001", "fp1")
		if err != nil || replay == nil || replay.Status != 201 || string(replay.Body) != `{"id":1}` {
			t.Fatalf("replay = %+v, %v", replay, err)
		}
		if _, _, err := s.Claim(ctx, "key_a", "k-00000001", "fp2"); !errors.Is(err, idempotency.ErrReused) {
			t.Fatalf("different input after completion: %v", err)
		}
		if claim, _, err := s.Claim(ctx, "key_b", "k-00000001", "fp1"); err != nil || claim == nil {
			t.Fatalf("another API key must have its own namespace: %v", err)
		}
		c.Advance(idempotency.Retention + time.Second)
		if claim, _, err := s.Claim(ctx, "key_a", "k-00000001", "fp2"); err != nil || claim == nil {
			t.Fatalf("after retention the key is free again: %v", err)
		}
	})
}

func TestAClaimWhoseProcessDiedExpiresWithTheDeadline(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *testclock.Clock) {
		ctx := context.Background()
		dead, _, err := s.Claim(ctx, "key_a", "k-00000002", "fp")
		if err != nil {
			t.Fatal(err)
		}
		c.Advance(36 * time.Second)
		retry, _, err := s.Claim(ctx, "key_a", "k-00000002", "fp")
		if err != nil || retry == nil {
			t.Fatalf("retry after the deadline: %v", err)
		}
		// The dead request, should it wake up, cannot overwrite the retry's claim.
		if err := s.Complete(ctx, dead, idempotency.Response{Status: 200}); err == nil {
			t.Fatal("a stale claim completed over its successor")
		}
	})
}

func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, _ store.Store, _ *testclock.Clock) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for i := 0; i < 32; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				claim, _, err := s.Claim(context.Background(), "key_a", "k-00000003", "fp")
				var busy *idempotency.InProgressError
				if err != nil && !errors.As(err, &busy) {
					t.Error(err)
				}
				if claim != nil {
					mu.Lock()
					winners++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("%d winners", winners)
		}
	})
}

func BenchmarkFingerprint(b *testing.B) {
	body := make([]byte, 2048)
	hdr := http.Header{"X-Service-Project": {"prj_01M8142SJ4P3055BQSZ1J8BYQY"}, "X-Service-End-User": {"user-42"}, "Content-Type": {"application/json"}}
	for i := 0; i < b.N; i++ {
		idempotency.Fingerprint("POST", "/v1/projects?x=1", body, hdr)
	}
}

func TestAUnitCommitsItsWritesWithTheResponseOrNotAtAll(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *testclock.Clock) {
		ctx := context.Background()
		deferred := idempotency.Deferring(raw)
		claim, _, err := s.Claim(ctx, "key_a", "k-00000004", "fp")
		if err != nil {
			t.Fatal(err)
		}
		u := &idempotency.Unit{}
		uctx := idempotency.WithUnit(ctx, u)
		it := store.NewItem(store.Key{PK: "res", SK: "1"})
		if err := deferred.Put(uctx, it, store.NotExists()); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Get(ctx, it.Key()); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("a write inside a unit was applied before the commit")
		}
		// The resource appears meanwhile: the commit fails and writes nothing.
		if err := raw.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
		var conflict *idempotency.CommitError
		if err := s.CompleteUnit(ctx, claim, idempotency.Response{Status: 201}, u); !errors.As(err, &conflict) {
			t.Fatalf("commit over a changed resource: %v", err)
		}
		if _, _, err := s.Claim(ctx, "key_a", "k-00000004", "fp"); !errors.As(err, new(*idempotency.InProgressError)) {
			t.Fatalf("the response was stored although the commit failed: %v", err)
		}
		// A clean unit commits both.
		claim2, _, _ := s.Claim(ctx, "key_a", "k-00000005", "fp")
		u2 := &idempotency.Unit{}
		other := store.NewItem(store.Key{PK: "res", SK: "2"})
		_ = deferred.Put(idempotency.WithUnit(ctx, u2), other, store.NotExists())
		if err := s.CompleteUnit(ctx, claim2, idempotency.Response{Status: 201}, u2); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Get(ctx, other.Key()); err != nil {
			t.Fatalf("the unit's write is missing: %v", err)
		}
		if _, replay, _ := s.Claim(ctx, "key_a", "k-00000005", "fp"); replay == nil || replay.Status != 201 {
			t.Fatal("the response was not stored with the write")
		}
	})
}

// A retry is the same request however its Content-Type is spelled: case,
// parameter order and a UTF-8 charset on JSON do not change what the
// operation reads, while another media type or charset still does.
func TestTheMediaTypeIsFingerprintedAsReadNotAsSpelled(t *testing.T) {
	fp := func(ct string) string {
		return idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"name":"a"}`), http.Header{"Content-Type": {ct}})
	}
	base := fp("application/json")
	for _, same := range []string{"application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8", "application/json; Charset=\"utf-8\""} {
		if fp(same) != base {
			t.Errorf("%q fingerprints unlike application/json", same)
		}
	}
	for _, other := range []string{"application/merge-patch+json", "text/plain", "application/json; charset=latin1"} {
		if fp(other) == base {
			t.Errorf("%q fingerprints like application/json", other)
		}
	}
	if fp("text/plain; charset=utf-8") == fp("text/plain") {
		t.Error("a charset on a text type is content the upload stores; it must count")
	}
	if fp("Text/Plain; B=1; a=2") != fp("text/plain; a=2; b=1") {
		t.Error("case and parameter order change a text type's fingerprint")
	}
}
