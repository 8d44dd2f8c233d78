package httpapi_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/shared/blob/fsblob"
	"platformapi/shared/credittoken"
	"platformapi/shared/httpapi"
	"platformapi/shared/queue/memqueue"
	"platformapi/shared/runs"
	"platformapi/shared/store/teststores"
	"platformapi/shared/superbrain"
	"platformapi/shared/upstream"
)

// runsEnv is an API server with a runs queue, an artifacts bucket and the
// real cloud-superbrain, and the run worker on the same store, queue and
// bucket, started when a test wants runs to execute.
type runsEnv struct {
	*env
	q      *memqueue.Queue
	worker *runs.Worker
	start  sync.Once
}

func forEachRunsBackend(t *testing.T, test func(t *testing.T, e *runsEnv)) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) { test(t, newRunsEnvOn(t, b)) })
	}
}

func newRunsEnvOn(t *testing.T, b teststores.Backend) *runsEnv {
	t.Helper()
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	signer, err := credittoken.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	st := b.Open(t, c.Now)
	bucket, err := fsblob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := memqueue.New()
	services := upstream.Router{superbrain.ServiceID: superbrain.New(st, c.Now)}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	srv, err := httpapi.New(httpapi.Deps{
		Store: st, CreditTokens: signer, Now: c.Now, Backend: b.Name, Logger: logger, RequestTimeout: 10 * time.Second,
		Services: services, RunsQueue: q, Artifacts: bucket,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	w := runs.NewWorker(runs.WorkerConfig{Config: runs.Config{Store: st, Queue: q, Artifacts: bucket, Now: c.Now},
		Services: services, Timeout: 10 * time.Second, Logger: logger})
	return &runsEnv{env: &env{t: t, url: hs.URL, clock: c, store: st, signer: signer, srv: srv, logs: logs}, q: q, worker: w}
}

// startWorker runs the worker loop, as functions/local does, until the
// test ends.
func (e *runsEnv) startWorker() {
	e.start.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); e.worker.Run(ctx) }()
		e.t.Cleanup(func() { cancel(); <-done })
	})
}

// createRun starts a memory.search run and returns its record.
func (e *runsEnv) createRun(key, query string, headers map[string]string) *resp {
	e.t.Helper()
	return e.must(e.do(req{method: "POST", path: "/v1/runs", key: key, idem: idem(), headers: headers,
		body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": query}}}), 202)
}

// waitRun polls the run until it has finished and returns it.
func (e *runsEnv) waitRun(key, id string) *resp {
	e.t.Helper()
	e.startWorker()
	for range 500 {
		r := e.must(e.do(req{method: "GET", path: "/v1/runs/" + id, key: key}), 200)
		if s := r.str("status"); s != "queued" && s != "running" {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("run %s did not finish", id)
	return nil
}

func (e *runsEnv) ids(r *resp) []string {
	var out []string
	for _, x := range r.body["data"].([]any) {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

func TestRunLifecycleOverHTTP(t *testing.T) {
	forEachRunsBackend(t, func(t *testing.T, e *runsEnv) {
		root, _ := e.rootKey(1, nil)
		e.must(e.do(req{method: "POST", path: "/v1/services/cloud-superbrain/invoke", key: root, idem: idem(),
			body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "runs write artifacts"}}}), 200)
		before := e.balance(root)

		created := e.createRun(root, "artifacts", nil)
		id := created.str("id")
		if !strings.HasPrefix(id, "run_") || created.str("status") != "queued" || created.header.Get("Location") != "/v1/runs/"+id || created.body["result"] != nil {
			t.Fatalf("created = %s %v", created.raw, created.header)
		}
		run := e.waitRun(root, id)
		if run.str("status") != "succeeded" || run.body["chargedCredits"].(float64) != 0.006 || run.body["attempts"].(float64) != 1 {
			t.Fatalf("run = %s", run.raw)
		}
		if got := e.balance(root); got != before-0.006 {
			t.Errorf("balance %v → %v, want moved by exactly the run's charge 0.006", before, got)
		}
		if hits := run.body["result"].(map[string]any)["results"].([]any); len(hits) != 1 {
			t.Errorf("result = %v", run.body["result"])
		}

		for _, tc := range []struct {
			query string
			want  int
		}{{"", 1}, {"?status=succeeded", 1}, {"?status=queued", 0}} {
			list := e.must(e.do(req{method: "GET", path: "/v1/runs" + tc.query, key: root}), 200)
			if got := e.ids(list); len(got) != tc.want || tc.want == 1 && got[0] != id {
				t.Errorf("GET /v1/runs%s = %v", tc.query, got)
			}
		}
		e.must(e.do(req{method: "GET", path: "/v1/runs?status=lost", key: root}), 400, "validation_failed")

		artifactID := strs(run.body["artifactIds"])[0]
		for _, path := range []string{"/v1/artifacts", "/v1/artifacts?runId=" + id} {
			if got := e.ids(e.must(e.do(req{method: "GET", path: path, key: root}), 200)); len(got) != 1 || got[0] != artifactID {
				t.Errorf("GET %s = %v, want [%s]", path, got, artifactID)
			}
		}
		content := e.must(e.do(req{method: "GET", path: "/v1/artifacts/" + artifactID + "/content", key: root}), 200)
		sum := sha256.Sum256(content.raw)
		if content.header.Get("Content-Type") != "application/json" || content.header.Get("X-Content-Sha256") != hex.EncodeToString(sum[:]) {
			t.Errorf("content headers %v", content.header)
		}
		if hits := content.body["results"].([]any); len(hits) != 1 {
			t.Errorf("content = %s, want the run's output", content.raw)
		}
	})
}

func TestIdempotentRunCreateEnqueuesOnce(t *testing.T) {
	forEachRunsBackend(t, func(t *testing.T, e *runsEnv) {
		root, _ := e.rootKey(1, nil)
		key := idem()
		send := func() *resp {
			return e.must(e.do(req{method: "POST", path: "/v1/runs", key: root, idem: key,
				body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "x"}}}), 202)
		}
		first, second := send(), send()
		if first.str("id") != second.str("id") || second.header.Get("Idempotent-Replayed") != "true" || second.header.Get("Location") == "" {
			t.Fatalf("replay = %s %v", second.raw, second.header)
		}
		ms, err := e.q.Receive(context.Background(), 10, time.Minute, 0)
		if err != nil || len(ms) != 1 {
			t.Fatalf("%d messages (%v), want 1", len(ms), err)
		}
		if list := e.ids(e.must(e.do(req{method: "GET", path: "/v1/runs", key: root}), 200)); len(list) != 1 {
			t.Errorf("runs = %v, want one", list)
		}
	})
}

func TestRunCreateAcceptsOnlyDurableOperationsOfAvailableServices(t *testing.T) {
	e := newRunsEnvOn(t, embedded)
	root, _ := e.rootKey(1, nil)
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
			e.must(e.do(req{method: "POST", path: "/v1/runs", key: root, idem: idem(), body: tc.body}), tc.status, tc.code)
		})
	}
	if ms, _ := e.q.Receive(context.Background(), 10, time.Minute, 0); len(ms) != 0 {
		t.Errorf("%d messages queued by refused creates", len(ms))
	}
}

func TestRunCreateWithoutRunsQueueIsUnavailable(t *testing.T) {
	e := newEnv(t)
	root, _ := e.rootKey(1, nil)
	e.must(e.do(req{method: "POST", path: "/v1/runs", key: root, idem: idem(),
		body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "x"}}}), 503, "service_unavailable")
}

func TestCancelledRunNeverExecutesOverHTTP(t *testing.T) {
	forEachRunsBackend(t, func(t *testing.T, e *runsEnv) {
		root, _ := e.rootKey(1, nil)
		before := e.balance(root)
		id := e.createRun(root, "x", nil).str("id")
		cancel := func() *resp {
			return e.do(req{method: "POST", path: "/v1/runs/" + id + "/cancel", key: root, idem: idem()})
		}
		if r := e.must(cancel(), 200); r.str("status") != "cancelled" || r.str("cancelRequestedAt") == "" {
			t.Fatalf("cancel = %s", r.raw)
		}
		if r := e.waitRun(root, id); r.str("status") != "cancelled" || r.body["attempts"].(float64) != 0 {
			t.Fatalf("run = %s", r.raw)
		}
		e.must(cancel(), 200) // cancelling again changes nothing
		if got := e.balance(root); got != before {
			t.Errorf("balance %v → %v for a cancelled run", before, got)
		}
		done := e.createRun(root, "y", nil).str("id")
		e.waitRun(root, done)
		e.must(e.do(req{method: "POST", path: "/v1/runs/" + done + "/cancel", key: root, idem: idem()}), 409, "conflict")
	})
}

func TestRunOfRevokedCreatorFailsUnchargedOverHTTP(t *testing.T) {
	forEachRunsBackend(t, func(t *testing.T, e *runsEnv) {
		root, _ := e.rootKey(1, nil)
		child, rec := e.child(root, map[string]any{"label": "worker"})
		before := e.balance(root)
		id := e.createRun(child, "x", nil).str("id")
		e.must(e.do(req{method: "DELETE", path: "/v1/api-keys/" + rec.str("id"), key: root, idem: idem()}), 200)
		r := e.waitRun(root, id)
		if r.str("status") != "failed" || r.body["error"].(map[string]any)["code"] != "key_revoked" || r.body["chargedCredits"].(float64) != 0 {
			t.Fatalf("run = %s", r.raw)
		}
		if got := e.balance(root); got != before {
			t.Errorf("balance %v → %v", before, got)
		}
	})
}

// A key that may not reach a run's service, or is bound to another
// project, does not see the run or its artifacts: 404, never 403.
func TestRunsAndArtifactsAreInvisibleWithoutAccess(t *testing.T) {
	forEachRunsBackend(t, func(t *testing.T, e *runsEnv) {
		root, _ := e.rootKey(1, nil)
		prj := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: idem(), body: map[string]any{"name": "one"}}), 201).str("id")
		other := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: idem(), body: map[string]any{"name": "two"}}), 201).str("id")
		id := e.createRun(root, "x", map[string]string{"X-Service-Project": prj}).str("id")
		artifact := strs(e.waitRun(root, id).body["artifactIds"])[0]
		scopes := []string{"runs:read", "runs:write", "artifacts:read"}
		noService, _ := e.child(root, map[string]any{"scopes": scopes, "allowedServices": []string{"core-research"}})
		otherProject, _ := e.child(root, map[string]any{"scopes": scopes, "projectId": other})
		sameProject, _ := e.child(root, map[string]any{"scopes": scopes, "projectId": prj})
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
					e.must(e.do(req{method: "GET", path: path, key: tc.key, headers: tc.headers}), status)
				}
				for _, path := range []string{"/v1/runs", "/v1/artifacts", "/v1/artifacts?runId=" + id} {
					got := e.ids(e.must(e.do(req{method: "GET", path: path, key: tc.key, headers: tc.headers}), 200))
					if (len(got) == 1) != tc.visible {
						t.Errorf("GET %s = %v", path, got)
					}
				}
				if !tc.visible {
					e.must(e.do(req{method: "POST", path: "/v1/runs/" + id + "/cancel", key: tc.key, idem: idem(), headers: tc.headers}), 404, "not_found")
				}
			})
		}
	})
}

func TestRunEndpointsEnforceScopesAndAccess(t *testing.T) {
	e := newRunsEnvOn(t, embedded)
	root, _ := e.rootKey(1, nil)
	id := e.createRun(root, "x", nil).str("id")
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
			key, _ := e.child(root, tc.key)
			r := req{method: tc.method, path: tc.path, key: key, body: tc.body}
			if tc.method == "POST" {
				r.idem = idem()
			}
			e.must(e.do(r), 403, tc.code)
		})
	}
	exact, _ := e.child(root, map[string]any{"scopes": []string{"runs:write"}, "allowedOperations": []string{"runs.create.cloud-superbrain.memory.search"}})
	e.must(e.do(req{method: "POST", path: "/v1/runs", key: exact, idem: idem(), body: search}), 202)
}

func TestArtifactDownloadOfUnknownArtifactIsNotFound(t *testing.T) {
	e := newRunsEnvOn(t, embedded)
	root, _ := e.rootKey(1, nil)
	for _, id := range []string{"art_01JD4Z7Q8N3M5K2H1G0F9E8D7C", "not-an-id"} {
		r := e.must(e.do(req{method: "GET", path: "/v1/artifacts/" + id + "/content", key: root}), 404, "not_found")
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("Content-Type %q", ct)
		}
	}
}

func TestRunsListPagesNewestFirst(t *testing.T) {
	forEachRunsBackend(t, func(t *testing.T, e *runsEnv) {
		root, _ := e.rootKey(1, nil)
		var created []string
		for _, q := range []string{"a", "b", "c"} {
			created = append(created, e.createRun(root, q, nil).str("id"))
			e.clock.Advance(time.Millisecond)
		}
		var got []string
		path := "/v1/runs?limit=2"
		for pages := 0; ; pages++ {
			r := e.must(e.do(req{method: "GET", path: path, key: root}), 200)
			got = append(got, e.ids(r)...)
			next, _ := r.body["nextCursor"].(string)
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
