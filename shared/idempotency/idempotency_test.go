package idempotency_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"platformapi/shared/idempotency"
	"platformapi/shared/store"
	"platformapi/shared/store/teststores"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func eachBackend(t *testing.T, test func(t *testing.T, s *idempotency.Store, raw store.Store, c *clock)) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			c := &clock{t: time.Now()}
			st := b.Open(t, c.Now)
			test(t, idempotency.New(st, c.Now, 35*time.Second), st, c)
		})
	}
}

func TestFingerprintCoversEveryPartOfTheInput(t *testing.T) {
	base := idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"a":1}`), "prj_1", "u1")
	for name, fp := range map[string]string{
		"method":   idempotency.Fingerprint("PATCH", "/v1/projects", []byte(`{"a":1}`), "prj_1", "u1"),
		"path":     idempotency.Fingerprint("POST", "/v1/projects?x", []byte(`{"a":1}`), "prj_1", "u1"),
		"body":     idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"a":2}`), "prj_1", "u1"),
		"project":  idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"a":1}`), "prj_2", "u1"),
		"end user": idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"a":1}`), "prj_1", ""),
		"boundary": idempotency.Fingerprint("POST", "/v1/projects", []byte(`{"a":1}prj_1`), "", "u1"),
	} {
		if fp == base {
			t.Errorf("changing the %s does not change the fingerprint", name)
		}
	}
}

func TestClaimCompleteReplay(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *clock) {
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
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *clock) {
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
	eachBackend(t, func(t *testing.T, s *idempotency.Store, _ store.Store, _ *clock) {
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
	for i := 0; i < b.N; i++ {
		idempotency.Fingerprint("POST", "/v1/projects?x=1", body, "prj_01M8142SJ4P3055BQSZ1J8BYQY", "user-42")
	}
}

func TestAUnitCommitsItsWritesWithTheResponseOrNotAtAll(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *idempotency.Store, raw store.Store, c *clock) {
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
