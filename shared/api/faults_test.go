package api_test

import (
	"sort"
	"strconv"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/harness/apitest"
)

// A storage outage in the middle of a write answers 503 with Retry-After and
// leaves nothing behind: no resource, no stuck idempotency claim. The test
// records which DynamoDB operations an idempotent create makes, then fails
// each of them in turn (throttling and a 500, through the SDK's own retries).
func TestStorageFaultsOnAWriteAnswer503AndLeaveNoPartialState(t *testing.T) {
	faults := awsenv.NewFaults()
	aws := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	e := apitest.NewOn(t, teststores.Backend{Name: "dynamodb-faults", Open: func(t *testing.T, now func() time.Time) store.Store {
		client, table := awstest.Table(t, aws)
		return dynamostore.New(client, table, dynamostore.WithClock(now))
	}})
	root, _ := e.RootKey(1, nil)
	count := func() int {
		return len(e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/projects?limit=100", Key: root}), 200).Body["data"].([]any))
	}

	// A first use records the key's lastUsedAt (a best-effort write that
	// a fault must not be aimed at); the write path is recorded after it.
	count()
	aws.Calls.Reset()
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "baseline"}}), 201)
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
				k := apitest.Idem()
				body := map[string]any{"name": "p-" + k}
				faults.Set(op, fault)
				r := e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: body})
				faults.Clear()
				e.Must(r, 503, "service_unavailable")
				if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 1 {
					t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
				}
				if got := count(); got != want {
					t.Fatalf("%d projects after a failed write, want %d", got, want)
				}
				// The same Idempotency-Key runs the operation once the store is back.
				retry := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: k, Body: body}), 201)
				if retry.Header.Get("Idempotent-Replayed") != "" {
					t.Fatal("a failed write was replayed")
				}
				want++
				if got := count(); got != want {
					t.Fatalf("%d projects after the retry, want %d", got, want)
				}
			})
		}
	}
	t.Logf("write Path: %v", ops)

	// A handler's own storage call failing is a 503 too, never a 500.
	faults.Set("DynamoDB.Query", awsenv.Throttle)
	r := e.Do(apitest.Req{Method: "GET", Path: "/v1/projects", Key: root})
	faults.Clear()
	e.Must(r, 503, "service_unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}
