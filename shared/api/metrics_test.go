package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"platformapi/shared/base/emf"
	"platformapi/shared/base/emf/emftest"
	"platformapi/shared/harness/apitest"
)

// Every request's one log line carries its metrics in the Embedded Metric
// Format: each metric and dimension the directives name is a key of the
// line, counted by group and operation, problems by code, and the charge,
// limit refusals and replays only where they happened.
func TestEveryRequestLineCarriesItsMetricsInEMF(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	limited, _ := e.Child(root, map[string]any{"limits": map[string]any{"projects.list": map[string]any{"requestsPerMinute": 1}}})
	type want struct {
		group, op, code string
		metrics         map[string]int64
		absent          []string
	}
	cases := map[string]want{}
	expect := func(r *apitest.Resp, w want) { cases[r.Header.Get("X-Request-Id")] = w }

	expect(e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: root}), 200), want{group: "projects", op: "projects.list",
		metrics: map[string]int64{"Requests": 1, "Errors4xx": 0, "Errors5xx": 0}, absent: []string{"LimitRefusals", "Replays", "ChargedMicroCredits", "Problems"}})
	e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: limited}), 200)
	expect(e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: limited}), 429, "limit_exceeded"), want{group: "projects", op: "projects.list", code: "limit_exceeded",
		metrics: map[string]int64{"Requests": 1, "Errors4xx": 1, "LimitRefusals": 1, "Problems": 1}})
	expect(e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/nowhere"}), 404, "not_found"), want{group: "none", op: "unrouted", code: "not_found",
		metrics: map[string]int64{"Errors4xx": 1, "Problems": 1}, absent: []string{"LimitRefusals"}})
	write := apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "metrics ride on the log line"}}}
	expect(e.Must(e.Do(write), 200), want{group: "services", op: "services.invoke",
		metrics: map[string]int64{"ChargedMicroCredits": 10_000, "Errors5xx": 0}, absent: []string{"Replays"}})
	expect(e.Must(e.Do(write), 200), want{group: "services", op: "services.invoke",
		metrics: map[string]int64{"Replays": 1, "Requests": 1}, absent: []string{"ChargedMicroCredits"}})

	seen := 0
	for _, line := range emftest.Lines(t, e.Logs.String()) {
		w, ok := cases[line["requestId"].(string)]
		if !ok {
			continue
		}
		seen++
		ns := line["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Namespace"]
		if ns != emf.Namespace || line["Group"] != w.group || line["Operation"] != w.op {
			t.Errorf("line names namespace %v group %v operation %v, want %s %s: %v", ns, line["Group"], line["Operation"], w.group, w.op, line)
		}
		if code, _ := line["Code"].(string); code != w.code {
			t.Errorf("%s: Code dimension %q, want %q", w.op, code, w.code)
		}
		declared := emftest.Metrics(line)
		for name, v := range w.metrics {
			if !declared[name] || line[name] != float64(v) {
				t.Errorf("%s: metric %s = %v (declared %v), want %d", w.op, name, line[name], declared[name], v)
			}
		}
		for _, name := range w.absent {
			if declared[name] {
				t.Errorf("%s: metric %s declared where it did not happen", w.op, name)
			}
		}
		if !declared["Latency"] {
			t.Errorf("%s: no Latency", w.op)
		}
	}
	if seen != len(cases) {
		t.Fatalf("found %d of %d request lines with metrics", seen, len(cases))
	}
}

// Where no CloudWatch reads the line (the local server, api.Config.NoMetrics)
// the access line carries no metrics: no _aws block, no metric values, no
// dimensions; the line itself is the same.
func TestTheAccessLineCarriesNoMetricsWhereNoCloudWatchReadsIt(t *testing.T) {
	e := apitest.New(t, apitest.Options{NoMetrics: true})
	root, _ := e.RootKey(1, nil)
	write := apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"operationId": "memory.write", "input": map[string]any{"text": "no metrics locally"}}}
	id := e.Must(e.Do(write), 200).Header.Get("X-Request-Id")
	for _, l := range strings.Split(e.Logs.String(), "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) != nil || line["requestId"] != id {
			continue
		}
		if line["status"] != float64(200) || line["operation"] != "services.invoke" {
			t.Fatalf("the access line lost its fields: %v", line)
		}
		for _, key := range []string{"_aws", "Requests", "Latency", "ChargedMicroCredits", "Group", "Operation"} {
			if _, ok := line[key]; ok {
				t.Errorf("the line carries %s: %v", key, line)
			}
		}
		return
	}
	t.Fatalf("no access line for %s:\n%s", id, e.Logs.String())
}
