package httpapi_test

import (
	"sort"
	"strconv"
	"testing"
	"time"

	"platformapi/shared/awsenv"
	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/store"
	"platformapi/shared/store/dynamostore"
	"platformapi/shared/store/teststores"
)

// A storage outage in the middle of a write answers 503 with Retry-After and
// leaves nothing behind: no resource, no stuck idempotency claim. The test
// records which DynamoDB operations an idempotent create makes, then fails
// each of them in turn (throttling and a 500, through the SDK's own retries).
func TestStorageFaultsOnAWriteAnswer503AndLeaveNoPartialState(t *testing.T) {
	faults := awsenv.NewFaults()
	aws := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	e := newEnvOn(t, teststores.Backend{Name: "dynamodb-faults", Open: func(t *testing.T, now func() time.Time) store.Store {
		client, table := awstest.Table(t, aws)
		return dynamostore.New(client, table, dynamostore.WithClock(now))
	}})
	root, _ := e.rootKey(1, nil)
	count := func() int {
		return len(e.must(e.do(req{method: "GET", path: "/v1/projects?limit=100", key: root}), 200).body["data"].([]any))
	}

	aws.Calls.Reset()
	e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: idem(), body: map[string]any{"name": "baseline"}}), 201)
	var ops []string
	for op := range aws.Calls.Snapshot() {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	if len(ops) < 3 {
		t.Fatalf("the write path made only %v", ops)
	}
	want := 1
	for _, op := range ops {
		for _, fault := range []awsenv.Fault{awsenv.Throttle, awsenv.ServerError} {
			t.Run(op+"/"+strconv.Itoa(int(fault)), func(t *testing.T) {
				k := idem()
				body := map[string]any{"name": "p-" + k}
				faults.Set(op, fault)
				r := e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: body})
				faults.Clear()
				e.must(r, 503, "service_unavailable")
				if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra < 1 {
					t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
				}
				if got := count(); got != want {
					t.Fatalf("%d projects after a failed write, want %d", got, want)
				}
				// The same Idempotency-Key runs the operation once the store is back.
				retry := e.must(e.do(req{method: "POST", path: "/v1/projects", key: root, idem: k, body: body}), 201)
				if retry.header.Get("Idempotent-Replayed") != "" {
					t.Fatal("a failed write was replayed")
				}
				want++
				if got := count(); got != want {
					t.Fatalf("%d projects after the retry, want %d", got, want)
				}
			})
		}
	}
	t.Logf("write path: %v", ops)

	// A handler's own storage call failing is a 503 too, never a 500.
	faults.Set("DynamoDB.Query", awsenv.Throttle)
	r := e.do(req{method: "GET", path: "/v1/projects", key: root})
	faults.Clear()
	e.must(r, 503, "service_unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}
