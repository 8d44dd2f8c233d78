package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func (e *env) invoke(key, service, op string, input any, approval string) *resp {
	e.t.Helper()
	body := map[string]any{"operationId": op, "input": input}
	if approval != "" {
		body["approvalId"] = approval
	}
	return e.do(req{method: "POST", path: "/v1/services/" + service + "/invoke", key: key, idem: idem(), body: body})
}

// accountWithMicro creates an account funded with exactly micro micro-credits.
func (e *env) accountWithMicro(micro int64) string {
	e.t.Helper()
	r := e.must(e.do(req{method: "POST", path: "/v1/api-keys", idem: idem(), body: map[string]any{},
		headers: map[string]string{"X-Service-Credit-Token": e.tokenMicro(micro)}}), 201)
	return r.str("secret")
}

func TestInvokeChargesExactlyWhatTheServiceReports(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		w := e.must(e.invoke(root, "cloud-superbrain", "memory.write", map[string]any{"text": "the deploy key rotates every ninety days"}, ""), 200)
		if w.str("status") != "succeeded" || w.body["chargedCredits"].(float64) != 0.01 || w.header.Get("X-Service-Credits-Charged") != "0.01" {
			t.Fatalf("write = %s %v", w.raw, w.header)
		}
		if got := e.balance(root); got != 0.99 {
			t.Fatalf("balance after a 0.01 charge = %v", got)
		}
		// A search is charged by its result count, below the held maximum.
		s := e.must(e.invoke(root, "cloud-superbrain", "memory.search", map[string]any{"query": "deploy key rotation"}, ""), 200)
		results := s.body["result"].(map[string]any)["results"].([]any)
		if len(results) != 1 || s.body["chargedCredits"].(float64) != 0.006 {
			t.Fatalf("search = %s", s.raw)
		}
		if got := e.balance(root); got != 0.984 {
			t.Fatalf("balance = %v, want 1 - 0.01 - 0.006", got)
		}
		// Invalid input is the service's 400 and costs nothing.
		e.must(e.invoke(root, "cloud-superbrain", "memory.write", map[string]any{"text": ""}, ""), 400, "validation_failed")
		e.must(e.invoke(root, "cloud-superbrain", "memory.nope", map[string]any{}, ""), 400, "validation_failed")
		e.must(e.invoke(root, "nope", "memory.write", map[string]any{}, ""), 404, "not_found")
		if got := e.balance(root); got != 0.984 {
			t.Fatalf("balance = %v after refused calls", got)
		}
	})
}

func TestConcurrentInvokesNeverSpendMoreThanTheBalance(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		key := e.accountWithMicro(10 * 10_000) // exactly 10 writes
		var ok, broke atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 100; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := e.invoke(key, "cloud-superbrain", "memory.write", map[string]any{"text": "memory " + strconv.Itoa(i)}, "")
				switch {
				case r.status == 200:
					ok.Add(1)
				case r.status == 402 && r.code() == "insufficient_credits":
					broke.Add(1)
				default:
					t.Errorf("invoke %d: %d %s", i, r.status, r.raw)
				}
			}(i)
		}
		wg.Wait()
		if ok.Load() != 10 || broke.Load() != 90 {
			t.Fatalf("%d succeeded, %d refused; want 10 and 90", ok.Load(), broke.Load())
		}
		if got := e.balance(key); got != 0 {
			t.Fatalf("balance = %v, want 0", got)
		}
	})
}

// Spec 2.1 rule 5 and CONTRACT "Approvals", end to end with the narrow worker key.
func TestNarrowWorkerDeletesMemoryThroughAnApproval(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		root, _ := e.rootKey(1, nil)
		worker, _ := e.child(root, map[string]any{
			"scopes":            []string{"services:invoke", "approvals:write"},
			"allowedServices":   []string{"cloud-superbrain"},
			"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.delete", "approvals.create", "approvals.decide"},
		})
		mem := e.must(e.invoke(root, "cloud-superbrain", "memory.write", map[string]any{"text": "forget me"}, ""), 200)
		input := map[string]any{"memoryId": mem.body["result"].(map[string]any)["memoryId"]}

		e.must(e.invoke(worker, "cloud-superbrain", "memory.delete", input, ""), 403, "approval_required")
		apr := e.must(e.do(req{method: "POST", path: "/v1/approvals/service-actions", key: worker, idem: idem(),
			body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": input}}), 201)
		if apr.str("status") != "pending" {
			t.Fatalf("approval = %s", apr.raw)
		}
		id := apr.str("id")
		e.must(e.invoke(worker, "cloud-superbrain", "memory.delete", input, id), 403, "approval_required") // still pending
		e.must(e.do(req{method: "POST", path: "/v1/approvals/" + id, key: worker, idem: idem(), body: map[string]any{"decision": "approve"}}), 200)
		e.must(e.do(req{method: "POST", path: "/v1/approvals/" + id, key: worker, idem: idem(), body: map[string]any{"decision": "reject"}}), 409, "conflict")
		// Another input, even semantically different by one field, is not covered.
		e.must(e.invoke(worker, "cloud-superbrain", "memory.delete", map[string]any{"memoryId": "mem_other"}, id), 403, "approval_required")

		// Concurrent invokes with one approval: exactly one consumes it.
		var wg sync.WaitGroup
		var ok, refused atomic.Int32
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.invoke(worker, "cloud-superbrain", "memory.delete", input, id)
				switch {
				case r.status == 200:
					ok.Add(1)
				case r.status == 403 && r.code() == "approval_required":
					refused.Add(1)
				default:
					t.Errorf("invoke: %d %s", r.status, r.raw)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 || refused.Load() != 7 {
			t.Fatalf("one approval was used %d times (%d refused)", ok.Load(), refused.Load())
		}
		got := e.must(e.do(req{method: "GET", path: "/v1/approvals?status=consumed", key: root}), 200)
		if n := len(got.body["data"].([]any)); n != 1 {
			t.Fatalf("%d consumed approvals listed", n)
		}
		// The worker cannot do anything else with memories.
		e.must(e.invoke(worker, "cloud-superbrain", "memory.write", map[string]any{"text": "x"}, ""), 403, "operation_denied")
		e.must(e.do(req{method: "GET", path: "/v1/approvals", key: worker}), 403, "scope_denied")
	})
}

func TestApprovalsExpireAndRejectedOnesNeverRun(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	input := map[string]any{"memoryId": "mem_01M8142SJ4P3055BQSZ1J8BYQY"}
	create := func() string {
		return e.must(e.do(req{method: "POST", path: "/v1/approvals/service-actions", key: root, idem: idem(),
			body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": input}}), 201).str("id")
	}
	rejected := create()
	e.must(e.do(req{method: "POST", path: "/v1/approvals/" + rejected, key: root, idem: idem(), body: map[string]any{"decision": "reject", "reason": "no"}}), 200)
	e.must(e.invoke(root, "cloud-superbrain", "memory.delete", input, rejected), 403, "approval_required")

	late := create()
	e.clock.Advance(25 * time.Hour)
	r := e.must(e.do(req{method: "GET", path: "/v1/approvals?status=expired", key: root}), 200)
	if n := len(r.body["data"].([]any)); n != 1 {
		t.Fatalf("%d expired approvals", n)
	}
	e.must(e.do(req{method: "POST", path: "/v1/approvals/" + late, key: root, idem: idem(), body: map[string]any{"decision": "approve"}}), 409, "conflict")
	e.must(e.do(req{method: "POST", path: "/v1/approvals/service-actions", key: root, idem: idem(),
		body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.write", "input": map[string]any{}}}), 400, "validation_failed")
}

func TestUpstreamRefusalsPassThroughAndChargeNothing(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(10, nil)
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
			e.serveUpstream(tc.handler)
			r := e.must(e.invoke(root, "core-research", "research.query", map[string]any{"question": "why"}, ""), tc.status, tc.code)
			if tc.retry != "" && r.header.Get("Retry-After") != tc.retry {
				t.Fatalf("Retry-After = %q, want the service's %q", r.header.Get("Retry-After"), tc.retry)
			}
			if r.header.Get("Retry-After") == "" {
				t.Fatal("no Retry-After")
			}
			if got := e.balance(root); got != 10 {
				t.Fatalf("balance %v: a refused call was charged", got)
			}
		})
	}
	t.Run("answered", func(t *testing.T) {
		e.serveUpstream(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("the correlation id was not passed on")
			}
			w.Header().Set("X-Charged-Credits", "0.125")
			w.Header().Set("X-Upstream-Request-Id", "up-42")
			json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"answer": 42}})
		})
		r := e.must(e.invoke(root, "core-research", "research.query", map[string]any{"question": "why"}, ""), 200)
		if r.header.Get("X-Service-Upstream-Request-Id") != "up-42" || r.header.Get("X-Service-Credits-Charged") != "0.125" {
			t.Fatalf("headers %v", r.header)
		}
		if got := e.balance(root); got != 9.875 {
			t.Fatalf("balance %v, want 9.875", got)
		}
	})
}

func TestCatalogueShowsOnlyWhatTheKeyMayReach(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	narrow, _ := e.child(root, map[string]any{"allowedServices": []string{"cloud-superbrain"},
		"allowedOperations": []string{"services.invoke.cloud-superbrain.memory.search", "actions.list", "services.list", "capabilities.list"}})
	svcs := e.must(e.do(req{method: "GET", path: "/v1/services", key: narrow}), 200).body["data"].([]any)
	if len(svcs) != 1 || svcs[0].(map[string]any)["serviceId"] != "cloud-superbrain" {
		t.Fatalf("services = %v", svcs)
	}
	caps := e.must(e.do(req{method: "GET", path: "/v1/capabilities", key: narrow}), 200).body["data"].([]any)
	if len(caps) != 1 || caps[0].(map[string]any)["capabilityId"] != "services.invoke.cloud-superbrain.memory.search" || caps[0].(map[string]any)["inputSchema"] == nil {
		t.Fatalf("capabilities = %v", caps)
	}
	e.must(e.do(req{method: "GET", path: "/v1/capabilities/core-research", key: narrow}), 403, "service_denied")
	e.must(e.do(req{method: "GET", path: "/v1/capabilities/nope", key: narrow}), 404, "not_found")
	actions := e.must(e.do(req{method: "GET", path: "/v1/actions?limit=100", key: narrow}), 200).body["data"].([]any)
	var ids []string
	for _, a := range actions {
		ids = append(ids, a.(map[string]any)["operationId"].(string))
	}
	want := []string{"services.list", "capabilities.list", "capabilities.list", "actions.list", "services.invoke.cloud-superbrain.memory.search"}
	if len(ids) != len(want) {
		t.Fatalf("actions = %v, want %v", ids, want)
	}
	all := e.must(e.do(req{method: "GET", path: "/v1/capabilities?limit=100", key: root}), 200).body["data"].([]any)
	if len(all) != 7 {
		t.Fatalf("root sees %d capabilities, want every invocable operation (7)", len(all))
	}
}

func TestEveryListHonoursLimitAndCursor(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	for i := 0; i < 3; i++ {
		e.must(e.do(req{method: "POST", path: "/v1/approvals/service-actions", key: root, idem: idem(),
			body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": map[string]any{"memoryId": strconv.Itoa(i)}}}), 201)
	}
	for _, path := range []string{"/v1/approvals", "/v1/services", "/v1/capabilities", "/v1/capabilities/cloud-superbrain", "/v1/actions", "/v1/api-keys", "/v1/webhooks", "/v1/runs"} {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		r := e.must(e.do(req{method: "GET", path: path + sep + "limit=1", key: root}), 200)
		if n := len(r.body["data"].([]any)); n > 1 {
			t.Errorf("%s?limit=1 returned %d items", path, n)
		}
	}
	first := e.must(e.do(req{method: "GET", path: "/v1/approvals?limit=2", key: root}), 200)
	if len(first.body["data"].([]any)) != 2 || first.body["nextCursor"] == nil {
		t.Fatalf("first page = %s", first.raw)
	}
	second := e.must(e.do(req{method: "GET", path: "/v1/approvals?limit=2&cursor=" + first.body["nextCursor"].(string), key: root}), 200)
	if len(second.body["data"].([]any)) != 1 || second.body["nextCursor"] != nil {
		t.Fatalf("second page = %s", second.raw)
	}
}

func TestActionsListDurableRunCapabilities(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	k, _ := e.child(root, map[string]any{"scopes": []string{"services:read", "runs:write"},
		"allowedOperations": []string{"actions.list", "runs.create.cloud-superbrain.memory.search"}})
	actions := e.must(e.do(req{method: "GET", path: "/v1/actions", key: k}), 200).body["data"].([]any)
	var got []string
	for _, a := range actions {
		got = append(got, a.(map[string]any)["operationId"].(string))
	}
	if strings.Join(got, ",") != "actions.list,runs.create.cloud-superbrain.memory.search" {
		t.Fatalf("actions = %v", got)
	}
}
