package usageapi_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/groups/keys"
	"platformapi/shared/harness/apitest"
)

// onEmulator: the DynamoDB emulator serves one request at a time, so a
// test that only drains a balance drains a smaller one there.
func onEmulator(e *apitest.Env) bool { return e.Ports.Backend != teststores.Embedded.Name }

// rootKeyMicro creates a new account with micro micro-credits and returns
// its root key.
func rootKeyMicro(e *apitest.Env, micro int64) string {
	e.T.Helper()
	return e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Idem: apitest.Idem(), Body: map[string]any{"label": "root"},
		Headers: map[string]string{"X-Service-Credit-Token": e.TokenMicro(micro)}}), 201).Str("secret")
}

// traffic sends requests and remembers the request id of every
// authenticated one, which must each leave exactly one event.
type traffic struct {
	e   *apitest.Env
	mu  sync.Mutex
	ids map[string]*apitest.Resp
}

func newTraffic(e *apitest.Env) *traffic { return &traffic{e: e, ids: map[string]*apitest.Resp{}} }

func (tr *traffic) do(r apitest.Req) *apitest.Resp {
	tr.e.T.Helper()
	res := tr.e.Do(r)
	if res.Status != 401 {
		tr.mu.Lock()
		tr.ids[res.Header.Get("X-Request-Id")] = res
		tr.mu.Unlock()
	}
	return res
}

// closeHour moves the clock to the next full hour and waits for the rollup:
// everything before it is complete in both the events and the usage, and
// the reading requests that follow fall outside [since, until).
func closeHour(t *testing.T, e *apitest.Env) time.Time {
	t.Helper()
	now := e.Clock.Now()
	until := now.Truncate(time.Hour).Add(time.Hour)
	e.Clock.Advance(until.Sub(now))
	if err := e.Audit.Catchup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return until
}

// listAll pages through GET /audit-events with the query.
func listAll(t *testing.T, e *apitest.Env, key string, q url.Values, headers ...map[string]string) []map[string]any {
	t.Helper()
	var out []map[string]any
	q.Set("limit", "100")
	for {
		req := apitest.Req{Method: "GET", Path: "/v1/audit-events?" + q.Encode(), Key: key}
		if len(headers) > 0 {
			req.Headers = headers[0]
		}
		r := e.Must(e.Do(req), 200)
		for _, ev := range r.Body["data"].([]any) {
			out = append(out, ev.(map[string]any))
		}
		next, _ := r.Body["nextCursor"].(string)
		if next == "" {
			return out
		}
		q.Set("cursor", next)
	}
}

func rangeQuery(since, until time.Time) url.Values {
	return url.Values{"since": {since.Format(time.RFC3339Nano)}, "until": {until.Format(time.RFC3339Nano)}}
}

// keyOf is the key record of a secret, with its account.
func keyOf(t *testing.T, e *apitest.Env, secret string) *keys.Key {
	t.Helper()
	chain, _, err := keys.NewRepo(e.Store, e.Clock.Now).Authenticate(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return chain[len(chain)-1]
}

func byRequest(evs []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, ev := range evs {
		id, _ := ev["requestId"].(string)
		out[id] = append(out[id], ev)
	}
	return out
}

func invokeReq(key, idem, op string, input any) apitest.Req {
	return apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: key, Idem: idem,
		Body: map[string]any{"operationId": op, "input": input}}
}
