package runsapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/runs"
	"platformapi/shared/harness/apitest"
)

// createRun starts a memory.search run and returns its record.
func createRun(e *apitest.Env, key, query string, headers map[string]string) *apitest.Resp {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: key, Idem: apitest.Idem(), Headers: headers,
		Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": query}}}), 202)
}

func ids(e *apitest.Env, r *apitest.Resp) []string {
	var out []string
	for _, x := range r.Body["data"].([]any) {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

func TestRunLifecycleOverHTTP(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "runs write artifacts"}}}), 200)
		before := e.Balance(root)

		created := createRun(e, root, "artifacts", nil)
		id := created.Str("id")
		if !strings.HasPrefix(id, "run_") || created.Str("status") != "queued" || created.Header.Get("Location") != "/v1/runs/"+id || created.Body["result"] != nil {
			t.Fatalf("created = %s %v", created.Raw, created.Header)
		}
		run := e.WaitRun(root, id)
		if run.Str("status") != "succeeded" || run.Body["chargedCredits"].(float64) != 0.006 || run.Body["attempts"].(float64) != 1 {
			t.Fatalf("run = %s", run.Raw)
		}
		if got := e.Balance(root); got != before-0.006 {
			t.Errorf("balance %v → %v, want moved by exactly the run's charge 0.006", before, got)
		}
		if hits := run.Body["result"].(map[string]any)["results"].([]any); len(hits) != 1 {
			t.Errorf("result = %v", run.Body["result"])
		}

		for _, tc := range []struct {
			query string
			want  int
		}{{"", 1}, {"?status=succeeded", 1}, {"?status=queued", 0}} {
			list := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/runs" + tc.query, Key: root}), 200)
			if got := ids(e, list); len(got) != tc.want || tc.want == 1 && got[0] != id {
				t.Errorf("GET /v1/runs%s = %v", tc.query, got)
			}
		}
		e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/runs?status=lost", Key: root}), 400, "validation_failed")

		artifactID := apitest.Strs(run.Body["artifactIds"])[0]
		for _, path := range []string{"/v1/artifacts", "/v1/artifacts?runId=" + id} {
			if got := ids(e, e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: root}), 200)); len(got) != 1 || got[0] != artifactID {
				t.Errorf("GET %s = %v, want [%s]", path, got, artifactID)
			}
		}
		content := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/artifacts/" + artifactID + "/content", Key: root}), 200)
		sum := sha256.Sum256(content.Raw)
		if content.Header.Get("Content-Type") != "application/json" || content.Header.Get("X-Content-Sha256") != hex.EncodeToString(sum[:]) {
			t.Errorf("content headers %v", content.Header)
		}
		if hits := content.Body["results"].([]any); len(hits) != 1 {
			t.Errorf("content = %s, want the run's output", content.Raw)
		}
	})
}

func TestIdempotentRunCreateEnqueuesOnce(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		key := apitest.Idem()
		send := func() *apitest.Resp {
			return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: root, Idem: key,
				Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "x"}}}), 202)
		}
		first, second := send(), send()
		if first.Str("id") != second.Str("id") || second.Header.Get("Idempotent-Replayed") != "true" || second.Header.Get("Location") == "" {
			t.Fatalf("replay = %s %v", second.Raw, second.Header)
		}
		ms, err := e.Queue(runs.Queue).Receive(context.Background(), 10, time.Minute, 0)
		if err != nil || len(ms) != 1 {
			t.Fatalf("%d messages (%v), want 1", len(ms), err)
		}
		if list := ids(e, e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/runs", Key: root}), 200)); len(list) != 1 {
			t.Errorf("runs = %v, want one", list)
		}
	})
}

func TestRunCreateAcceptsOnlyDurableOperationsOfAvailableServices(t *testing.T) {
	e := apitest.New(t, apitest.Options{NoRemoteService: true})
	root, _ := e.RootKey(1, nil)
	big := strings.Repeat("x", runs.MaxInputBytes)
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"not durable", map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.write", "input": map[string]any{"text": "x"}}, 400, "validation_failed"},
		{"unknown operation", map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.nope"}, 400, "validation_failed"},
		{"unknown service", map[string]any{"serviceId": "nope", "operationId": "memory.search"}, 400, "validation_failed"},
		{"no service", map[string]any{"operationId": "memory.search"}, 400, "validation_failed"},
		{"input over 256 KiB", map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": big}}, 400, "validation_failed"},
		{"service not configured here", map[string]any{"serviceId": "core-research", "operationId": "research.query"}, 503, "service_unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: root, Idem: apitest.Idem(), Body: tc.body}), tc.status, tc.code)
		})
	}
	if ms, _ := e.Queue(runs.Queue).Receive(context.Background(), 10, time.Minute, 0); len(ms) != 0 {
		t.Errorf("%d messages queued by refused creates", len(ms))
	}
}

func TestRunCreateWithoutRunsQueueIsUnavailable(t *testing.T) {
	e := apitest.New(t, apitest.Options{NoQueues: []work.Queue{runs.Queue}})
	root, _ := e.RootKey(1, nil)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "x"}}}), 503, "service_unavailable")
}

func TestCancelledRunNeverExecutesOverHTTP(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		before := e.Balance(root)
		id := createRun(e, root, "x", nil).Str("id")
		cancel := func() *apitest.Resp {
			return e.Do(apitest.Req{Method: "POST", Path: "/v1/runs/" + id + "/cancel", Key: root, Idem: apitest.Idem()})
		}
		if r := e.Must(cancel(), 200); r.Str("status") != "cancelled" || r.Str("cancelRequestedAt") == "" {
			t.Fatalf("cancel = %s", r.Raw)
		}
		if r := e.WaitRun(root, id); r.Str("status") != "cancelled" || r.Body["attempts"].(float64) != 0 {
			t.Fatalf("run = %s", r.Raw)
		}
		e.Must(cancel(), 200) // cancelling again changes nothing
		if got := e.Balance(root); got != before {
			t.Errorf("balance %v → %v for a cancelled run", before, got)
		}
		done := createRun(e, root, "y", nil).Str("id")
		e.WaitRun(root, done)
		e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs/" + done + "/cancel", Key: root, Idem: apitest.Idem()}), 409, "conflict")
	})
}

func TestRunOfRevokedCreatorFailsUnchargedOverHTTP(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		child, rec := e.Child(root, map[string]any{"label": "worker"})
		before := e.Balance(root)
		id := createRun(e, child, "x", nil).Str("id")
		e.Must(e.Do(apitest.Req{Method: "DELETE", Path: "/v1/api-keys/" + rec.Str("id"), Key: root, Idem: apitest.Idem()}), 200)
		r := e.WaitRun(root, id)
		if r.Str("status") != "failed" || r.Body["error"].(map[string]any)["code"] != "key_revoked" || r.Body["chargedCredits"].(float64) != 0 {
			t.Fatalf("run = %s", r.Raw)
		}
		if got := e.Balance(root); got != before {
			t.Errorf("balance %v → %v", before, got)
		}
	})
}

// A key that may not reach a run's service, or is bound to another
// project, does not see the run or its artifacts: 404, never 403.
func TestRunsAndArtifactsAreInvisibleWithoutAccess(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		prj := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "one"}}), 201).Str("id")
		other := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "two"}}), 201).Str("id")
		id := createRun(e, root, "x", map[string]string{"X-Service-Project": prj}).Str("id")
		artifact := apitest.Strs(e.WaitRun(root, id).Body["artifactIds"])[0]
		scopes := []string{"runs:read", "runs:write", "artifacts:read"}
		noService, _ := e.Child(root, map[string]any{"scopes": scopes, "allowedServices": []string{"core-research"}})
		otherProject, _ := e.Child(root, map[string]any{"scopes": scopes, "projectId": other})
		sameProject, _ := e.Child(root, map[string]any{"scopes": scopes, "projectId": prj})
		for _, tc := range []struct {
			name    string
			key     string
			headers map[string]string
			visible bool
		}{
			{"account level", root, nil, true},
			{"bound to the run's project", sameProject, nil, true},
			{"no access to the run's service", noService, nil, false},
			{"bound to another project", otherProject, nil, false},
			{"selecting another project", root, map[string]string{"X-Service-Project": other}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status := map[bool]int{true: 200, false: 404}[tc.visible]
				for _, path := range []string{"/v1/runs/" + id, "/v1/artifacts/" + artifact + "/content"} {
					e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: tc.key, Headers: tc.headers}), status)
				}
				for _, path := range []string{"/v1/runs", "/v1/artifacts", "/v1/artifacts?runId=" + id} {
					got := ids(e, e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: tc.key, Headers: tc.headers}), 200))
					if (len(got) == 1) != tc.visible {
						t.Errorf("GET %s = %v", path, got)
					}
				}
				if !tc.visible {
					e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs/" + id + "/cancel", Key: tc.key, Idem: apitest.Idem(), Headers: tc.headers}), 404, "not_found")
				}
			})
		}
	})
}

func TestRunEndpointsEnforceScopesAndAccess(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	id := createRun(e, root, "x", nil).Str("id")
	search := map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "x"}}
	cases := []struct {
		name   string
		key    map[string]any
		method string
		path   string
		body   any
		code   string
	}{
		{"create needs runs:write", map[string]any{"scopes": []string{"runs:read"}}, "POST", "/v1/runs", search, "scope_denied"},
		{"list needs runs:read", map[string]any{"scopes": []string{"runs:write"}}, "GET", "/v1/runs", nil, "scope_denied"},
		{"read needs runs:read", map[string]any{"scopes": []string{"runs:write"}}, "GET", "/v1/runs/" + id, nil, "scope_denied"},
		{"cancel needs runs:write", map[string]any{"scopes": []string{"runs:read"}}, "POST", "/v1/runs/" + id + "/cancel", nil, "scope_denied"},
		{"artifacts need artifacts:read", map[string]any{"scopes": []string{"runs:read"}}, "GET", "/v1/artifacts", nil, "scope_denied"},
		{"create needs service access", map[string]any{"scopes": []string{"runs:write"}, "allowedServices": []string{"core-research"}}, "POST", "/v1/runs", search, "service_denied"},
		{"an invoke capability does not allow a run", map[string]any{"scopes": []string{"runs:write"}, "allowedOperations": []string{"services.invoke.cloud-superbrain.memory.search"}}, "POST", "/v1/runs", search, "operation_denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, _ := e.Child(root, tc.key)
			r := apitest.Req{Method: tc.method, Path: tc.path, Key: key, Body: tc.body}
			if tc.method == "POST" {
				r.Idem = apitest.Idem()
			}
			e.Must(e.Do(r), 403, tc.code)
		})
	}
	exact, _ := e.Child(root, map[string]any{"scopes": []string{"runs:write"}, "allowedOperations": []string{"runs.create.cloud-superbrain.memory.search"}})
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: exact, Idem: apitest.Idem(), Body: search}), 202)
}

func TestArtifactDownloadOfUnknownArtifactIsNotFound(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for _, id := range []string{"art_01JD4Z7Q8N3M5K2H1G0F9E8D7C", "not-an-id"} {
		r := e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/artifacts/" + id + "/content", Key: root}), 404, "not_found")
		if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("Content-Type %q", ct)
		}
	}
}

func TestRunsListPagesNewestFirst(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		root, _ := e.RootKey(1, nil)
		var created []string
		for _, q := range []string{"a", "b", "c"} {
			created = append(created, createRun(e, root, q, nil).Str("id"))
			e.Clock.Advance(time.Millisecond)
		}
		var got []string
		path := "/v1/runs?limit=2"
		for pages := 0; ; pages++ {
			r := e.Must(e.Do(apitest.Req{Method: "GET", Path: path, Key: root}), 200)
			got = append(got, ids(e, r)...)
			next, _ := r.Body["nextCursor"].(string)
			if next == "" {
				if pages != 1 {
					t.Errorf("%d pages, want 2", pages+1)
				}
				break
			}
			path = "/v1/runs?limit=2&cursor=" + next
		}
		if strings.Join(got, ",") != strings.Join([]string{created[2], created[1], created[0]}, ",") {
			t.Errorf("listed %v, created %v", got, created)
		}
	})
}
