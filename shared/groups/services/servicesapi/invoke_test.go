package servicesapi_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/credits"
	"platformapi/shared/harness/apitest"
)

func invoke(e *apitest.Env, key, service, op string, input any, approval string) *apitest.Resp {
	e.T.Helper()
	return e.Do(invokeReq(key, service, op, input, approval))
}

// invokeReq is the request invoke sends, under a fresh Idempotency-Key.
func invokeReq(key, service, op string, input any, approval string) apitest.Req {
	body := map[string]any{"operationId": op, "input": input}
	if approval != "" {
		body["approvalId"] = approval
	}
	return apitest.Req{Method: "POST", Path: "/v1/services/" + service + "/invoke", Key: key, Idem: apitest.Idem(), Body: body}
}

// accountWithMicro creates an account funded with exactly micro micro-credits.
func accountWithMicro(e *apitest.Env, micro int64) string {
	e.T.Helper()
	r := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{},
		Headers: map[string]string{"X-Service-Credit-Token": e.TokenMicro(micro)}}), 201)
	return r.Str("secret")
}

func TestInvokeChargesExactlyWhatTheServiceReports(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		w := e.Must(invoke(e, root, "cloud-superbrain", "memory.write", map[string]any{"text": "the deploy key rotates every ninety days"}, ""), 200)
		if w.Str("status") != "succeeded" || w.Body["chargedCredits"].(float64) != 0.01 || w.Header.Get("X-Service-Credits-Charged") != "0.01" {
			t.Fatalf("write = %s %v", w.Raw, w.Header)
		}
		if got := e.Balance(root); got != 0.99 {
			t.Fatalf("balance after a 0.01 charge = %v", got)
		}
		// A search is charged by its result count, below the held maximum.
		s := e.Must(invoke(e, root, "cloud-superbrain", "memory.search", map[string]any{"query": "deploy key rotation"}, ""), 200)
		results := s.Body["result"].(map[string]any)["results"].([]any)
		if len(results) != 1 || s.Body["chargedCredits"].(float64) != 0.006 {
			t.Fatalf("search = %s", s.Raw)
		}
		if got := e.Balance(root); got != 0.984 {
			t.Fatalf("balance = %v, want 1 - 0.01 - 0.006", got)
		}
		// Invalid input is the service's 400 and costs nothing.
		e.Must(invoke(e, root, "cloud-superbrain", "memory.write", map[string]any{"text": ""}, ""), 400, "validation_failed")
		e.Must(invoke(e, root, "cloud-superbrain", "memory.nope", map[string]any{}, ""), 400, "validation_failed")
		e.Must(invoke(e, root, "nope", "memory.write", map[string]any{}, ""), 404, "not_found")
		if got := e.Balance(root); got != 0.984 {
			t.Fatalf("balance = %v after refused calls", got)
		}
	})
}

func TestConcurrentInvokesNeverSpendMoreThanTheBalance(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		key := accountWithMicro(e, 10*10_000) // exactly 10 writes
		var ok, broke atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 100; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				// A 503 (the ledger's bound on one account's contention)
				// promises that a retry with the same Idempotency-Key
				// completes or replays what it did: the client retries so.
				r := e.DoRetrying(invokeReq(key, "cloud-superbrain", "memory.write", map[string]any{"text": "memory " + strconv.Itoa(i)}, ""))
				switch {
				case r.Status == 200:
					ok.Add(1)
				case r.Status == 402 && r.Code() == "insufficient_credits":
					broke.Add(1)
				default:
					t.Errorf("invoke %d: %d %s", i, r.Status, r.Raw)
				}
			}(i)
		}
		wg.Wait()
		if ok.Load() != 10 || broke.Load() != 90 {
			t.Fatalf("%d succeeded, %d refused; want 10 and 90", ok.Load(), broke.Load())
		}
		if got := e.Balance(key); got != 0 {
			t.Fatalf("balance = %v, want 0", got)
		}
	})
}

// Approvals with the narrow worker key, end to end (docs/approvals.md).
func TestNarrowWorkerDeletesMemoryThroughAnApproval(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		worker, _ := e.Child(root, map[string]any{
			"scopes":            []string{"services:invoke", "approvals:write"},
			"allowedServices":   []string{"cloud-superbrain"},
			"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.delete", "approvals.create", "approvals.decide"},
		})
		mem := e.Must(invoke(e, root, "cloud-superbrain", "memory.write", map[string]any{"text": "forget me"}, ""), 200)
		input := map[string]any{"memoryId": mem.Body["result"].(map[string]any)["memoryId"]}

		e.Must(invoke(e, worker, "cloud-superbrain", "memory.delete", input, ""), 403, "approval_required")
		apr := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: worker, Idem: apitest.Idem(),
			Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": input}}), 201)
		if apr.Str("status") != "pending" {
			t.Fatalf("approval = %s", apr.Raw)
		}
		id := apr.Str("id")
		e.Must(invoke(e, worker, "cloud-superbrain", "memory.delete", input, id), 403, "approval_required") // still pending
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/" + id, Key: worker, Idem: apitest.Idem(), Body: map[string]any{"decision": "approve"}}), 200)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/" + id, Key: worker, Idem: apitest.Idem(), Body: map[string]any{"decision": "reject"}}), 409, "conflict")
		// Another input, even semantically different by one field, is not covered.
		e.Must(invoke(e, worker, "cloud-superbrain", "memory.delete", map[string]any{"memoryId": "mem_other"}, id), 403, "approval_required")

		// Concurrent invokes with one approval: exactly one consumes it.
		var wg sync.WaitGroup
		var ok, refused atomic.Int32
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := invoke(e, worker, "cloud-superbrain", "memory.delete", input, id)
				switch {
				case r.Status == 200:
					ok.Add(1)
				case r.Status == 403 && r.Code() == "approval_required":
					refused.Add(1)
				default:
					t.Errorf("invoke: %d %s", r.Status, r.Raw)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 || refused.Load() != 7 {
			t.Fatalf("one approval was used %d times (%d refused)", ok.Load(), refused.Load())
		}
		got := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/approvals?status=consumed", Key: root}), 200)
		if n := len(got.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d consumed approvals listed", n)
		}
		// The worker cannot do anything else with memories.
		e.Must(invoke(e, worker, "cloud-superbrain", "memory.write", map[string]any{"text": "x"}, ""), 403, "operation_denied")
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/approvals", Key: worker}), 403, "scope_denied")
	})
}

func TestApprovalsExpireAndRejectedOnesNeverRun(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	input := map[string]any{"memoryId": "mem_01M8142SJ4P3055BQSZ1J8BYQY"}
	create := func() string {
		return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": input}}), 201).Str("id")
	}
	rejected := create()
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/" + rejected, Key: root, Idem: apitest.Idem(), Body: map[string]any{"decision": "reject", "reason": "no"}}), 200)
	e.Must(invoke(e, root, "cloud-superbrain", "memory.delete", input, rejected), 403, "approval_required")

	late := create()
	e.Clock.Advance(25 * time.Hour)
	r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/approvals?status=expired", Key: root}), 200)
	if n := len(r.Body["data"].([]any)); n != 1 {
		t.Fatalf("%d expired approvals", n)
	}
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/" + late, Key: root, Idem: apitest.Idem(), Body: map[string]any{"decision": "approve"}}), 409, "conflict")
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.write", "input": map[string]any{}}}), 400, "validation_failed")
}

func TestUpstreamRefusalsPassThroughAndChargeNothing(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		status  int
		code    string
		retry   string
	}{
		{"rate limited", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
		}, 429, "upstream_rate_limited", "7"},
		{"unavailable", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "12")
			w.WriteHeader(503)
		}, 503, "service_unavailable", "12"},
		{"malformed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Charged-Credits", "0.1")
			w.Write([]byte("{not json"))
		}, 503, "service_unavailable", ""},
		{"over-charging", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Charged-Credits", "999")
			w.Write([]byte(`{"output":{}}`))
		}, 503, "service_unavailable", ""},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}, 503, "service_unavailable", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ServeUpstream(tc.handler)
			r := e.Must(invoke(e, root, "core-research", "research.query", map[string]any{"question": "why"}, ""), tc.status, tc.code)
			if tc.retry != "" && r.Header.Get("Retry-After") != tc.retry {
				t.Fatalf("Retry-After = %q, want the service's %q", r.Header.Get("Retry-After"), tc.retry)
			}
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("no Retry-After")
			}
			if got := e.Balance(root); got != 10 {
				t.Fatalf("balance %v: a refused call was charged", got)
			}
		})
	}
	t.Run("answered", func(t *testing.T) {
		e.ServeUpstream(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("the correlation id was not passed on")
			}
			w.Header().Set("X-Charged-Credits", "0.125")
			w.Header().Set("X-Upstream-Request-Id", "up-42")
			json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"answer": 42}})
		})
		r := e.Must(invoke(e, root, "core-research", "research.query", map[string]any{"question": "why"}, ""), 200)
		if r.Header.Get("X-Service-Upstream-Request-Id") != "up-42" || r.Header.Get("X-Service-Credits-Charged") != "0.125" {
			t.Fatalf("headers %v", r.Header)
		}
		if got := e.Balance(root); got != 9.875 {
			t.Fatalf("balance %v, want 9.875", got)
		}
	})
}

func TestCatalogueShowsOnlyWhatTheKeyMayReach(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	narrow, _ := e.Child(root, map[string]any{"allowedServices": []string{"cloud-superbrain"},
		"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.search", "actions.list", "services.list", "capabilities.list"}})
	svcs := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/services", Key: narrow}), 200).Body["data"].([]any)
	if len(svcs) != 1 || svcs[0].(map[string]any)["serviceId"] != "cloud-superbrain" {
		t.Fatalf("services = %v", svcs)
	}
	caps := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/capabilities", Key: narrow}), 200).Body["data"].([]any)
	if len(caps) != 1 || caps[0].(map[string]any)["capabilityId"] != "services.invoke.cloud-superbrain.memory.search" || caps[0].(map[string]any)["inputSchema"] == nil {
		t.Fatalf("capabilities = %v", caps)
	}
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/capabilities/core-research", Key: narrow}), 403, "service_denied")
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/capabilities/nope", Key: narrow}), 404, "not_found")
	actions := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/actions?limit=100", Key: narrow}), 200).Body["data"].([]any)
	var ids []string
	for _, a := range actions {
		ids = append(ids, a.(map[string]any)["operationId"].(string))
	}
	want := []string{"services.list", "capabilities.list", "capabilities.list", "actions.list", "services.invoke.cloud-superbrain.memory.search"}
	if len(ids) != len(want) {
		t.Fatalf("actions = %v, want %v", ids, want)
	}
	all := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/capabilities?limit=100", Key: root}), 200).Body["data"].([]any)
	if len(all) != 7 {
		t.Fatalf("root sees %d capabilities, want every invocable operation (7)", len(all))
	}
}

func TestEveryListHonoursLimitAndCursor(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for i := 0; i < 3; i++ {
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": map[string]any{"memoryId": strconv.Itoa(i)}}}), 201)
	}
	for _, path := range []string{"/v1/approvals", "/v1/services", "/v1/capabilities", "/v1/capabilities/cloud-superbrain", "/v1/actions", "/v1/api-keys", "/v1/webhooks", "/v1/runs"} {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: path + sep + "limit=1", Key: root}), 200)
		if n := len(r.Body["data"].([]any)); n > 1 {
			t.Errorf("%s?limit=1 returned %d items", path, n)
		}
	}
	first := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/approvals?limit=2", Key: root}), 200)
	if len(first.Body["data"].([]any)) != 2 || first.Body["nextCursor"] == nil {
		t.Fatalf("first page = %s", first.Raw)
	}
	second := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/approvals?limit=2&cursor=" + first.Body["nextCursor"].(string), Key: root}), 200)
	if len(second.Body["data"].([]any)) != 1 || second.Body["nextCursor"] != nil {
		t.Fatalf("second page = %s", second.Raw)
	}
}

func TestActionsListDurableRunCapabilities(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	k, _ := e.Child(root, map[string]any{"scopes": []string{"services:read", "runs:write"},
		"allowedOperations": []string{"actions.list", "runs.create.cloud-superbrain.memory.search"}})
	actions := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/actions", Key: k}), 200).Body["data"].([]any)
	var got []string
	for _, a := range actions {
		got = append(got, a.(map[string]any)["operationId"].(string))
	}
	if strings.Join(got, ",") != "actions.list,runs.create.cloud-superbrain.memory.search" {
		t.Fatalf("actions = %v", got)
	}
}

// A crash after an invoke ran but before its response was stored (the
// stored response is lost) must not make the retry run or charge it again:
// the retry reuses the first attempt's credit hold, and the service, asked
// with the same idempotency identity, answers what it did the first time.
func TestARetryAfterALostResponseNeitherRunsNorChargesTwice(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, rec := e.RootKey(1, nil)
		req := apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "once"}}}
		first := e.Must(e.Do(req), 200)
		// The process "died" before the stored response survived.
		if err := e.Store.Delete(context.Background(), store.Key{PK: "idem#" + rec.Str("id") + "#" + req.Idem, SK: "idem"}); err != nil {
			t.Fatal(err)
		}
		again := e.Must(e.Do(req), 200)
		if again.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("the stored response was not lost")
		}
		id := func(r *apitest.Resp) string { return r.Body["result"].(map[string]any)["memoryId"].(string) }
		if id(again) != id(first) {
			t.Fatalf("the retry wrote memory %s, the first %s", id(again), id(first))
		}
		if got := e.Balance(root); got != 0.99 {
			t.Fatalf("balance %v, want 0.99: charged once", got)
		}
		list := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"operationId": "memory.list", "input": map[string]any{}}}), 200)
		if n := len(list.Body["result"].(map[string]any)["data"].([]any)); n != 1 {
			t.Fatalf("%d memories, want 1", n)
		}
	})
}

// TestServicesAreAvailableExactlyWhenThisDeploymentAnswersThem: the API's
// own endpoint groups are always served, an invoked service only with an
// invoker (core-research has one in apitest unless NoRemoteService), and
// MCP offers tools only of available services.
func TestServicesAreAvailableExactlyWhenThisDeploymentAnswersThem(t *testing.T) {
	served := map[string]bool{"platform-api": true, "cloud-superbrain": true, "core-database": true,
		"managed-wallets": true, "managed-trading": true, "universal-swaps": true}
	for _, tc := range []struct {
		name     string
		opts     apitest.Options
		research bool
	}{
		{"with a research upstream", apitest.Options{}, true},
		{"without one", apitest.Options{NoRemoteService: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := apitest.New(t, tc.opts)
			root, _ := e.RootKey(1, nil)
			want := maps.Clone(served)
			want["core-research"] = tc.research
			svcs := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/services?limit=100", Key: root}), 200).Body["data"].([]any)
			got := map[string]bool{}
			for _, s := range svcs {
				m := s.(map[string]any)
				got[m["serviceId"].(string)] = m["available"].(bool)
			}
			for _, svc := range catalog.Services() {
				if got[svc.ID] != want[svc.ID] {
					t.Errorf("%s: available = %v, want %v", svc.ID, got[svc.ID], want[svc.ID])
				}
			}
			session, err := mcpSession(e, t, root, "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			tools, err := session.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			offered := map[string]bool{}
			for _, tl := range tools.Tools {
				offered[strings.SplitN(tl.Name, "__", 2)[0]] = true
			}
			for svc := range offered {
				if !want[svc] {
					t.Errorf("MCP offers tools of %s, which cannot answer", svc)
				}
			}
			if !offered["cloud-superbrain"] || offered["core-research"] != tc.research {
				t.Errorf("MCP offers tools of %v", offered)
			}
		})
	}
}

// A request that outlives its credit hold (a starved process: the sweep
// released the hold while the service ran) answers a 503 that asks for a
// retry with its Idempotency-Key, having charged nothing; the retry asks
// the service again under the call's identity and charges the call once.
// Each request has one audit event, and the events sum to what the
// account spent.
func TestAnInvokeWhoseHoldLapsedIsChargedOnceByItsRetry(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(10, nil)
	ledger := credits.NewLedger(e.Store, e.Clock.Now)
	if _, err := ledger.SweepHolds(context.Background(), credits.GraceAfterDeadline); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	e.ServeUpstream(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			e.Clock.Advance(time.Hour)
			if n, err := ledger.SweepHolds(r.Context(), credits.GraceAfterDeadline); err != nil || n != 1 {
				t.Errorf("the sweep released %d holds (%v); want the call's", n, err)
			}
		}
		w.Header().Set("X-Charged-Credits", "0.125")
		json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"answer": 42}})
	})
	since := e.Clock.Now().Add(-time.Second)
	req := invokeReq(root, "core-research", "research.query", map[string]any{"question": "why"}, "")
	first := e.Must(e.Do(req), 503, "service_unavailable")
	if first.Header.Get("Retry-After") == "" || !strings.Contains(first.Str("detail"), "same Idempotency-Key") {
		t.Fatalf("the lapsed attempt answered %s %v; want a retry with its key asked for", first.Raw, first.Header)
	}
	if got := e.Balance(root); got != 10 {
		t.Fatalf("balance %v after the lapsed attempt; want nothing charged", got)
	}
	again := e.Must(e.Do(req), 200)
	if again.Body["chargedCredits"].(float64) != 0.125 || e.Balance(root) != 9.875 || calls.Load() != 2 {
		t.Fatalf("retry: %s, balance %v, %d calls; want the call charged once", again.Raw, e.Balance(root), calls.Load())
	}
	if err := e.Audit.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := e.Must(e.Do(apitest.Req{Method: "GET", Key: root, Path: "/v1/audit-events?since=" + since.Format(time.RFC3339Nano) +
		"&until=" + e.Clock.Now().Add(time.Second).Format(time.RFC3339Nano) + "&operation=services.invoke.core-research.research.query"}), 200).Body["data"].([]any)
	byRequest, sum := map[string]int{}, 0.0
	for _, ev := range events {
		m := ev.(map[string]any)
		byRequest[m["requestId"].(string)]++
		sum += m["chargedCredits"].(float64)
	}
	want := map[string]int{first.Header.Get("X-Request-Id"): 1, again.Header.Get("X-Request-Id"): 1}
	if !maps.Equal(byRequest, want) || sum != 0.125 {
		t.Fatalf("audit events per request %v carrying %v credits; want one each, carrying 0.125: %v", byRequest, sum, events)
	}
}
