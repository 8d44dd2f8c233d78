package api_test

import (
	"context"
	"platformapi/shared/harness/apitest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/domain/limits"
)

// The same key and input replay the stored response (docs/idempotency.md).
func TestSameIdempotencyKeyAndInputReplaysTheStoredResponse(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		k := apitest.Idem()
		first := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "p"}}), 201)
		again := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "p"}}), 201)
		if again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("Idempotent-Replayed first=%q again=%q", first.Header.Get("Idempotent-Replayed"), again.Header.Get("Idempotent-Replayed"))
		}
		if string(first.Raw) != string(again.Raw) || again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
			t.Fatalf("replay differs:\n%s\n%s", first.Raw, again.Raw)
		}
		if again.Header.Get("X-Request-Id") == first.Header.Get("X-Request-Id") {
			t.Fatal("a replay is a new request and has its own X-Request-Id")
		}
		list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: root}), 200)
		if n := len(list.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d projects after a replay, want 1", n)
		}
	})
}

func TestSameIdempotencyKeyWithDifferentInputIs409(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	k := apitest.Idem()
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "p"}}), 201)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "q"}}), 409, "idempotency_key_reused")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects?x=1", Key: root, Idem: k, Body: map[string]any{"name": "p"}}), 409, "idempotency_key_reused")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "p"},
		Headers: map[string]string{"X-Service-End-User": "u1"}}), 409, "idempotency_key_reused")
}

// A retry is the same request however its Content-Type is spelled: it
// replays, through the real router, on both backends.
func TestARetryWhoseContentTypeIsSpelledOtherwiseReplays(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"} {
			k := apitest.Idem()
			first := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "p " + k}}), 201)
			again := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "p " + k},
				Headers: map[string]string{"Content-Type": ct}}), 201)
			if again.Header.Get("Idempotent-Replayed") != "true" || again.Str("id") != first.Str("id") {
				t.Errorf("%q: not replayed (%s)", ct, again.Raw)
			}
		}
	})
}

// An idempotency key belongs to one API key (docs/idempotency.md).
func TestSiblingKeysNeverReplayEachOther(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	a, _ := e.Child(root, map[string]any{})
	b, _ := e.Child(root, map[string]any{})
	k := apitest.Idem()
	ra := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: a, Idem: k, Body: map[string]any{"name": "same"}}), 201)
	rb := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: b, Idem: k, Body: map[string]any{"name": "same"}}), 201)
	if rb.Header.Get("Idempotent-Replayed") != "" || ra.Str("id") == rb.Str("id") {
		t.Fatal("a sibling key replayed another key's response")
	}
}

func TestConcurrentDuplicatesExecuteOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		k := apitest.Idem()
		const n = 32
		var wg sync.WaitGroup
		var created, replayed, busy atomic.Int32
		ids := sync.Map{}
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: map[string]any{"name": "once"}})
				switch {
				case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "true":
					replayed.Add(1)
					ids.Store(r.Str("id"), true)
				case r.Status == 201:
					created.Add(1)
					ids.Store(r.Str("id"), true)
				case r.Status == 409 && r.Code() == "idempotency_request_in_progress":
					if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 1 {
						t.Errorf("in-progress 409 with Retry-After %q", r.Header.Get("Retry-After"))
					}
					busy.Add(1)
				default:
					t.Errorf("unexpected %d %s", r.Status, r.Raw)
				}
			}()
		}
		wg.Wait()
		if created.Load() != 1 {
			t.Fatalf("operation executed %d times, want once (replayed %d, in progress %d)", created.Load(), replayed.Load(), busy.Load())
		}
		distinct := 0
		ids.Range(func(_, _ any) bool { distinct++; return true })
		if distinct != 1 {
			t.Fatalf("%d different projects answered", distinct)
		}
		list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: root}), 200)
		if got := len(list.Body["data"].([]any)); got != 1 {
			t.Fatalf("%d projects exist, want 1", got)
		}
	})
}

func TestOwn4xxIsStoredButAccessRejectionsAreNot(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	k := apitest.Idem()
	bad := map[string]any{"scopes": []string{"nope:x"}}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Idem: k, Body: bad}), 400, "validation_failed")
	if r := e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Idem: k, Body: bad}); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("the operation's own 400 must be stored and replayed")
	}
	narrow, _ := e.Child(root, map[string]any{"scopes": []string{"projects:read", "api_keys:manage"}})
	k2 := apitest.Idem()
	wide := map[string]any{"scopes": []string{"projects:write"}}
	for i := 0; i < 2; i++ {
		r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: narrow, Idem: k2, Body: wide}), 403, "delegation_denied")
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("a 403 must not be stored")
		}
	}
	noScope, _ := e.Child(root, map[string]any{"scopes": []string{"projects:read"}})
	k3 := apitest.Idem()
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: noScope, Idem: k3, Body: map[string]any{"name": "x"}}), 403, "scope_denied")
	// The same Idempotency-Key is still free for the same key once it is allowed.
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k3, Body: map[string]any{"name": "x"}}), 201)
}

func limitsBody(sel string, l map[string]any) map[string]any {
	return map[string]any{"limits": map[string]any{sel: l}}
}

// Exactly N of 4N concurrent requests are admitted (docs/limits.md).
func TestRequestsPerMinuteAdmitsExactlyNUnderConcurrency(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		const n = 8
		k, _ := e.Child(root, limitsBody("projects.list", map[string]any{"requestsPerMinute": n}))
		var wg sync.WaitGroup
		var ok, limited atomic.Int32
		for i := 0; i < 4*n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: k})
				switch {
				case r.Status == 200:
					ok.Add(1)
				case r.Status == 429 && r.Code() == "limit_exceeded":
					ra, _ := strconv.Atoi(r.Header.Get("Retry-After"))
					if r.Header.Get("X-Service-Limit-Operation") != "projects.list" || ra < 1 || ra > 60 {
						t.Errorf("429 Headers: op=%q retry=%q", r.Header.Get("X-Service-Limit-Operation"), r.Header.Get("Retry-After"))
					}
					limited.Add(1)
				default:
					t.Errorf("unexpected %d %s", r.Status, r.Raw)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != n || limited.Load() != 3*n {
			t.Fatalf("admitted %d and limited %d, want %d and %d", ok.Load(), limited.Load(), n, 3*n)
		}
		// Other operations are not covered by that selector.
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 200)
		e.Clock.Advance(time.Minute)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: k}), 200)
	})
}

func TestAnAncestorLimitCapsItsWholeSubtree(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		parent, _ := e.Child(root, limitsBody("*", map[string]any{"requestsPerMinute": 6}))
		a, _ := e.Child(parent, map[string]any{})
		b, _ := e.Child(parent, limitsBody("credits.balance.read", map[string]any{"requestsPerMinute": 5}))
		e.Clock.Advance(time.Minute) // creating a and b were requests of the parent too
		admitted := 0
		for i := 0; i < 10; i++ {
			k := a
			if i%2 == 1 {
				k = b
			}
			r := e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k})
			if r.Status == 200 {
				admitted++
				continue
			}
			e.Must(r, 429, "limit_exceeded")
			if r.Header.Get("X-Service-Limit-Operation") != "*" {
				t.Fatalf("exhausted selector %q, want *", r.Header.Get("X-Service-Limit-Operation"))
			}
		}
		if admitted != 6 {
			t.Fatalf("two children together got %d requests through a parent limit of 6", admitted)
		}
	})
}

func TestAReplayCountsAsARequest(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	k, _ := e.Child(root, limitsBody("projects.create", map[string]any{"requestsPerMinute": 2}))
	ik := apitest.Idem()
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: k, Idem: ik, Body: map[string]any{"name": "x"}}), 201)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: k, Idem: ik, Body: map[string]any{"name": "x"}}), 201)
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: k, Idem: ik, Body: map[string]any{"name": "x"}}), 429, "limit_exceeded")
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("a 429 is not a replay")
	}
}

// A process that died mid-request leaves a lease; it frees itself when the
// lease (bounded by the request deadline) expires.
func TestADeadRequestsConcurrencyLeaseFreesItself(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		k, rec := e.Child(root, limitsBody("credits.balance.read", map[string]any{"maxConcurrent": 1}))
		one := int64(1)
		owner := limits.Owner{ID: rec.Str("id"), Limits: limits.Set{"credits.balance.read": {MaxConcurrent: &one}}}
		// Another process admits a request and dies without releasing.
		counter := limits.NewCounter(e.Store, e.Clock.Now, 15*time.Second)
		if _, err := counter.Admit(context.Background(), []limits.Owner{owner}, []string{"credits.balance.read"}); err != nil {
			t.Fatal(err)
		}
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 429, "limit_exceeded")
		if r.Header.Get("X-Service-Limit-Operation") != "credits.balance.read" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("429 headers %v", r.Header)
		}
		e.Clock.Advance(16 * time.Second)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 200)
		// Released on every exit Path: sequential requests never pile up.
		for i := 0; i < 5; i++ {
			e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 200)
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k, Headers: map[string]string{"X-Service-End-User": "bad user"}}), 400)
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/credits/balance", Key: k}), 200)
	})
}

// A claim whose process died frees itself once its deadline passes.
func TestADeadRequestsIdempotencyClaimFreesItself(t *testing.T) {
	e := apitest.New(t)
	root, rec := e.RootKey(1, nil)
	k := apitest.Idem()
	body := map[string]any{"name": "x"}
	claimDeadProcess(t, e, rec.Str("id"), k, "/v1/projects", body)
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: body}), 409, "idempotency_request_in_progress")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("in-progress 409 without Retry-After")
	}
	e.Clock.Advance(20 * time.Second)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: body}), 201)
}

func TestCreditsPerDayIsAcceptedOnlyOnMeteredOperations(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for _, sel := range []string{"services.invoke", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", "runs.create", "runs.create.cloud-superbrain", "wallets.transactions.create", "trading.orders.create", "swaps.execute"} {
		e.Child(root, limitsBody(sel, map[string]any{"creditsPerDay": 5}))
	}
	for _, sel := range []string{"*", "projects.create", "apiKeys.list", "credits.x402.topUp"} {
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Idem: apitest.Idem(), Body: limitsBody(sel, map[string]any{"creditsPerDay": 5})}), 400, "validation_failed")
	}
}
