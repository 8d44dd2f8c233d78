package httpapi_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/limits"
)

// Spec 5.6 rules 3 and 4.
func TestSameIdempotencyKeyAndInputReplaysTheStoredResponse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		k := idem()
		first := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: map[string]any{"name": "p"}}), 201)
		again := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: map[string]any{"name": "p"}}), 201)
		if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("Idempotent-Replayed first=%q again=%q", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
		}
		if string(first.raw) != string(again.raw) || again.header.Get("Content-Type") != first.header.Get("Content-Type") {
			t.Fatalf("replay differs:\n%s\n%s", first.raw, again.raw)
		}
		if again.header.Get("X-Request-Id") == first.header.Get("X-Request-Id") {
			t.Fatal("a replay is a new request and has its own X-Request-Id")
		}
		list := e.must(e.do(req{method: "GET", path: "/v1/projects", key: root}), 200)
		if n := len(list.body["data"].([]any)); n != 1 {
			t.Fatalf("%d projects after a replay, want 1", n)
		}
	})
}

func TestSameIdempotencyKeyWithDifferentInputIs409(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	k := idem()
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: map[string]any{"name": "p"}}), 201)
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: map[string]any{"name": "q"}}), 409, "idempotency_key_reused")
	e.must(e.do(req{method: "POST", path: "/v1/projects?x=1", key: root, idem: k, body: map[string]any{"name": "p"}}), 409, "idempotency_key_reused")
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: map[string]any{"name": "p"},
		headers: map[string]string{"X-Service-End-User": "u1"}}), 409, "idempotency_key_reused")
}

// Spec 5.6 rule 5.
func TestSiblingKeysNeverReplayEachOther(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	a, _ := e.child(root, map[string]any{})
	b, _ := e.child(root, map[string]any{})
	k := idem()
	ra := e.must(e.do(req{method: "POST", path: "/v1/projects", key: a, idem: k, body: map[string]any{"name": "same"}}), 201)
	rb := e.must(e.do(req{method: "POST", path: "/v1/projects", key: b, idem: k, body: map[string]any{"name": "same"}}), 201)
	if rb.header.Get("Idempotent-Replayed") != "" || ra.str("id") == rb.str("id") {
		t.Fatal("a sibling key replayed another key's response")
	}
}

func TestConcurrentDuplicatesExecuteOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		k := idem()
		const n = 32
		var wg sync.WaitGroup
		var created, replayed, busy atomic.Int32
		ids := sync.Map{}
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: map[string]any{"name": "once"}})
				switch {
				case r.status == 201 && r.header.Get("Idempotent-Replayed") == "true":
					replayed.Add(1)
					ids.Store(r.str("id"), true)
				case r.status == 201:
					created.Add(1)
					ids.Store(r.str("id"), true)
				case r.status == 409 && r.code() == "idempotency_request_in_progress":
					if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra < 1 {
						t.Errorf("in-progress 409 with Retry-After %q", r.header.Get("Retry-After"))
					}
					busy.Add(1)
				default:
					t.Errorf("unexpected %d %s", r.status, r.raw)
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
		list := e.must(e.do(req{method: "GET", path: "/v1/projects", key: root}), 200)
		if got := len(list.body["data"].([]any)); got != 1 {
			t.Fatalf("%d projects exist, want 1", got)
		}
	})
}

func TestOwn4xxIsStoredButAccessRejectionsAreNot(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	k := idem()
	bad := map[string]any{"scopes": []string{"nope:x"}}
	e.must(e.do(req{method: "POST", path: "/v1/api-keys", key: root, idem: k, body: bad}), 400, "validation_failed")
	if r := e.do(req{method: "POST", path: "/v1/api-keys", key: root, idem: k, body: bad}); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("the operation's own 400 must be stored and replayed")
	}
	narrow, _ := e.child(root, map[string]any{"scopes": []string{"projects:read", "api_keys:manage"}})
	k2 := idem()
	wide := map[string]any{"scopes": []string{"projects:write"}}
	for i := 0; i < 2; i++ {
		r := e.must(e.do(req{method: "POST", path: "/v1/api-keys", key: narrow, idem: k2, body: wide}), 403, "delegation_denied")
		if r.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("a 403 must not be stored")
		}
	}
	noScope, _ := e.child(root, map[string]any{"scopes": []string{"projects:read"}})
	k3 := idem()
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: noScope, idem: k3, body: map[string]any{"name": "x"}}), 403, "scope_denied")
	// The same Idempotency-Key is still free for the same key once it is allowed.
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k3, body: map[string]any{"name": "x"}}), 201)
}

func limitsBody(sel string, l map[string]any) map[string]any {
	return map[string]any{"limits": map[string]any{sel: l}}
}

// Spec 8 rule 4, CONTRACT: exactly N of 4N concurrent requests are admitted.
func TestRequestsPerMinuteAdmitsExactlyNUnderConcurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		const n = 8
		k, _ := e.child(root, limitsBody("projects.list", map[string]any{"requestsPerMinute": n}))
		var wg sync.WaitGroup
		var ok, limited atomic.Int32
		for i := 0; i < 4*n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.do(req{method: "GET", path: "/v1/projects", key: k})
				switch {
				case r.status == 200:
					ok.Add(1)
				case r.status == 429 && r.code() == "limit_exceeded":
					ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
					if r.header.Get("X-Service-Limit-Operation") != "projects.list" || ra < 1 || ra > 60 {
						t.Errorf("429 headers: op=%q retry=%q", r.header.Get("X-Service-Limit-Operation"), r.header.Get("Retry-After"))
					}
					limited.Add(1)
				default:
					t.Errorf("unexpected %d %s", r.status, r.raw)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != n || limited.Load() != 3*n {
			t.Fatalf("admitted %d and limited %d, want %d and %d", ok.Load(), limited.Load(), n, 3*n)
		}
		// Other operations are not covered by that selector.
		e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k}), 200)
		e.clock.Advance(time.Minute)
		e.must(e.do(req{method: "GET", path: "/v1/projects", key: k}), 200)
	})
}

func TestAnAncestorLimitCapsItsWholeSubtree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		parent, _ := e.child(root, limitsBody("*", map[string]any{"requestsPerMinute": 6}))
		a, _ := e.child(parent, map[string]any{})
		b, _ := e.child(parent, limitsBody("credits.balance.read", map[string]any{"requestsPerMinute": 5}))
		e.clock.Advance(time.Minute) // creating a and b were requests of the parent too
		admitted := 0
		for i := 0; i < 10; i++ {
			k := a
			if i%2 == 1 {
				k = b
			}
			r := e.do(req{method: "GET", path: "/v1/credits/balance", key: k})
			if r.status == 200 {
				admitted++
				continue
			}
			e.must(r, 429, "limit_exceeded")
			if r.header.Get("X-Service-Limit-Operation") != "*" {
				t.Fatalf("exhausted selector %q, want *", r.header.Get("X-Service-Limit-Operation"))
			}
		}
		if admitted != 6 {
			t.Fatalf("two children together got %d requests through a parent limit of 6", admitted)
		}
	})
}

func TestAReplayCountsAsARequest(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	k, _ := e.child(root, limitsBody("projects.create", map[string]any{"requestsPerMinute": 2}))
	ik := idem()
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: k, idem: ik, body: map[string]any{"name": "x"}}), 201)
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: k, idem: ik, body: map[string]any{"name": "x"}}), 201)
	r := e.must(e.do(req{method: "POST", path: "/v1/projects", key: k, idem: ik, body: map[string]any{"name": "x"}}), 429, "limit_exceeded")
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("a 429 is not a replay")
	}
}

// A process that died mid-request leaves a lease; it frees itself when the
// lease (bounded by the request deadline) expires.
func TestADeadRequestsConcurrencyLeaseFreesItself(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		k, rec := e.child(root, limitsBody("credits.balance.read", map[string]any{"maxConcurrent": 1}))
		one := int64(1)
		owner := limits.Owner{ID: rec.str("id"), Limits: limits.Set{"credits.balance.read": {MaxConcurrent: &one}}}
		// Another process admits a request and dies without releasing.
		counter := limits.NewCounter(e.store, e.clock.Now, 15*time.Second)
		if _, err := counter.Admit(context.Background(), []limits.Owner{owner}, []string{"credits.balance.read"}); err != nil {
			t.Fatal(err)
		}
		r := e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k}), 429, "limit_exceeded")
		if r.header.Get("X-Service-Limit-Operation") != "credits.balance.read" || r.header.Get("Retry-After") == "" {
			t.Fatalf("429 headers %v", r.header)
		}
		e.clock.Advance(16 * time.Second)
		e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k}), 200)
		// Released on every exit path: sequential requests never pile up.
		for i := 0; i < 5; i++ {
			e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k}), 200)
		}
		e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k, headers: map[string]string{"X-Service-End-User": "bad user"}}), 400)
		e.must(e.do(req{method: "GET", path: "/v1/credits/balance", key: k}), 200)
	})
}

// A claim whose process died frees itself once its deadline passes.
func TestADeadRequestsIdempotencyClaimFreesItself(t *testing.T) {
	e := newEnv(t)
	root, rec := e.rootKey(1, nil)
	k := idem()
	body := map[string]any{"name": "x"}
	claimDeadProcess(t, e, rec.str("id"), k, "/v1/projects", body)
	r := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: body}), 409, "idempotency_request_in_progress")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("in-progress 409 without Retry-After")
	}
	e.clock.Advance(20 * time.Second)
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: body}), 201)
}

func TestCreditsPerDayIsAcceptedOnlyOnMeteredOperations(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	for _, sel := range []string{"services.invoke", "services.invoke.cloud-superbrain", "services.invoke.cloud-superbrain.memory.write", "runs.create", "runs.create.cloud-superbrain", "wallets.transactions.create", "trading.orders.create", "swaps.execute"} {
		e.child(root, limitsBody(sel, map[string]any{"creditsPerDay": 5}))
	}
	for _, sel := range []string{"*", "projects.create", "apiKeys.list", "credits.x402.topUp"} {
		e.must(e.do(req{method: "POST", path: "/v1/api-keys", key: root, idem: idem(), body: limitsBody(sel, map[string]any{"creditsPerDay": 5})}), 400, "validation_failed")
	}
}
