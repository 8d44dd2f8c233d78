package connectionsapi_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/work"
	"platformapi/shared/harness/apitest"
)

// withKey adds the API key to every request of the MCP client.
type withKey struct{ secret string }

func (b withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// Credentials go in and reach the managed service, and nothing else ever
// holds them: no response (also of an idempotent replay, an error or an
// MCP tool call), no log line, no store write of any kind (records,
// idempotency items, webhook deliveries, runs), no webhook message. The
// search looks for every secret in plain text, hex and base64 at every
// alignment, and is shown to find them where they must be: in the
// headers the service received.
func TestNoSecretLeavesTheServerExceptToTheService(t *testing.T) {
	const (
		apiKey     = "S1apiKEYfirst0123456789"
		apiRotated = "S2apiKEYsecond0123456789"
		password   = "S3basicPASSWORD0123456789"
		access     = "S4oauthACCESS0123456789"
		refresh    = "S5oauthREFRESH0123456789"
		client     = "S6oauthCLIENT0123456789"
		asName     = "S7pastedASaNAME0123456789"
		refused    = "S8refusedTOKEN0123456789"
	)
	secrets := []string{apiKey, apiRotated, password, access, refresh, client, asName, refused}
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		calls := serve(e, 200)
		root, _ := e.RootKey(100, nil)
		var answers [][]byte
		do := func(r apitest.Req, status int, code ...string) *apitest.Resp {
			t.Helper()
			resp := e.Must(e.Do(r), status, code...)
			hdr, _ := json.Marshal(resp.Header)
			answers = append(answers, resp.Raw, hdr)
			return resp
		}
		post := func(path, idem string, body any, status int, code ...string) *apitest.Resp {
			t.Helper()
			return do(apitest.Req{Method: "POST", Path: path, Key: root, Idem: idem, Body: body}, status, code...)
		}
		// A webhook for every event, so each connection event is queued.
		receiver := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer receiver.Close()
		post("/v1/webhooks", apitest.Idem(), map[string]any{"url": receiver.URL + "/in", "events": []string{"*"}}, 201)

		createIdem := apitest.Idem()
		apiBody := map[string]any{"label": "vendor", "type": "api_key", "serviceIds": []string{"core-research"},
			"credentials": map[string]any{"key": apiKey, "headerName": "X-Vendor-Key"}}
		api := post("/v1/connections", createIdem, apiBody, 201)
		if replay := post("/v1/connections", createIdem, apiBody, 201); string(replay.Raw) != string(api.Raw) {
			t.Fatalf("replayed create differs: %s", replay.Raw)
		}
		basic := post("/v1/connections", apitest.Idem(), map[string]any{"label": "login", "type": "basic", "serviceIds": []string{"core-research"},
			"credentials": map[string]any{"username": "ada", "password": password}}, 201)
		oauth := post("/v1/connections", apitest.Idem(), map[string]any{"label": "oauth", "type": "oauth2", "serviceIds": []string{"core-research"},
			"credentials": map[string]any{"accessToken": access, "refreshToken": refresh, "clientId": "cid", "clientSecret": client, "tokenUrl": "https://auth.example.com/token"}}, 201)
		post("/v1/connections", apitest.Idem(), map[string]any{"label": "x", "type": "bearer", "serviceIds": []string{"core-research"},
			"credentials": map[string]any{asName: "value"}}, 400, "validation_failed")
		post("/v1/connections", apitest.Idem(), map[string]any{"label": "x", "type": "bearer", "serviceIds": []string{"core-research"},
			"credentials": map[string]any{"token": refused + "\u0007"}}, 400, "validation_failed")
		post("/v1/connections", apitest.Idem(), map[string]any{"label": "x", "type": "bearer", "serviceIds": []string{"core-research"},
			"credentials": map[string]any{"token": 42, "key": refused}}, 400, "validation_failed")
		do(apitest.Req{Method: "PATCH", Path: "/v1/connections/" + api.Str("id"), Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"credentials": map[string]any{"key": apiRotated, "headerName": "X-Vendor-Key"}}}, 200)
		do(apitest.Req{Method: "PATCH", Path: "/v1/connections/" + oauth.Str("id"), Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"credentials": map[string]any{"token": refused}}}, 400, "validation_failed")
		do(apitest.Req{Method: "GET", Path: "/v1/connections", Key: root}, 200)
		for _, c := range []*apitest.Resp{api, basic, oauth} {
			do(apitest.Req{Method: "GET", Path: "/v1/connections/" + c.Str("id"), Key: root}, 200)
		}

		invokeIdem := apitest.Idem()
		invokeBody := map[string]any{"operationId": "research.query", "input": map[string]any{"question": "why"},
			"connections": map[string]string{"vendor": api.Str("id"), "login": basic.Str("id")}}
		first := post("/v1/services/core-research/invoke", invokeIdem, invokeBody, 200)
		got := calls.last(t)
		if got.Get("X-Vendor-Key") != apiRotated || got.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("ada:"+password)) {
			t.Fatalf("the service received %v", got)
		}
		n := len(calls.all())
		if replay := post("/v1/services/core-research/invoke", invokeIdem, invokeBody, 200); string(replay.Raw) != string(first.Raw) || len(calls.all()) != n {
			t.Fatalf("replay: %s, %d more calls", replay.Raw, len(calls.all())-n)
		}
		post("/v1/services/core-research/invoke", apitest.Idem(), map[string]any{"operationId": "research.query", "input": map[string]any{},
			"connections": map[string]string{"vendor": basic.Str("id"), "oauth": oauth.Str("id")}}, 400, "validation_failed") // both send Authorization
		run := post("/v1/runs", apitest.Idem(), map[string]any{"serviceId": "core-research", "operationId": "research.query", "input": map[string]any{},
			"connections": map[string]string{"oauth": oauth.Str("id")}}, 202)
		if done := e.WaitRun(root, run.Str("id")); done.Str("status") != "succeeded" || calls.last(t).Get("Authorization") != "Bearer "+access {
			t.Fatalf("run %s sent %q", done.Raw, calls.last(t).Get("Authorization"))
		}
		answers = append(answers, e.Must(e.Do(apitest.Req{Method: "GET", Path: "/v1/runs/" + run.Str("id"), Key: root}), 200).Raw)

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: e.URL + "/mcp", HTTPClient: &http.Client{Transport: withKey{root}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n = len(calls.all())
		for i, slots := range []map[string]string{{"oauth": oauth.Str("id")}, {"vendor": "con_01JQ3Y6V1W2X3Y4Z5A6B7C8D9E"}} {
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "core-research__research_query",
				Arguments: map[string]any{"connections": slots}})
			if err != nil {
				t.Fatal(err)
			}
			text, _ := json.Marshal(res)
			answers = append(answers, text)
			if res.IsError != (i == 1) {
				t.Fatalf("tool call %d: %s", i, text)
			}
		}
		if len(calls.all()) != n+1 || calls.last(t).Get("Authorization") != "Bearer "+access {
			t.Fatalf("the MCP tool calls made %d calls, the last with %q", len(calls.all())-n, calls.last(t).Get("Authorization"))
		}
		_ = session.Close()

		for _, c := range []*apitest.Resp{api, basic, oauth} {
			do(apitest.Req{Method: "DELETE", Path: "/v1/connections/" + c.Str("id"), Key: root, Idem: apitest.Idem()}, 200)
		}

		var queued [][]byte
		ms, err := e.Queue(work.Webhooks).Receive(context.Background(), 10, time.Minute, 0)
		for err == nil && len(ms) > 0 {
			for _, m := range ms {
				queued = append(queued, m.Body)
			}
			ms, err = e.Queue(work.Webhooks).Receive(context.Background(), 10, time.Minute, 0)
		}
		if err != nil || len(queued) == 0 {
			t.Fatalf("webhook queue: %d messages, %v", len(queued), err)
		}
		// The events were published (so their data was searched below).
		for _, ev := range []string{"connection.created", "connection.rotated", "connection.deleted"} {
			if find(append(e.Writes(), queued...), ev) == nil {
				t.Fatalf("event %s was not published", ev)
			}
		}

		var headers [][]byte
		for _, h := range calls.all() {
			headers = append(headers, []byte(fmt.Sprint(h)))
		}
		for _, s := range []string{apiRotated, password, access} {
			if find(headers, s) == nil {
				t.Fatalf("the search does not find %q where the service received it", s)
			}
		}
		for where, haystack := range map[string][][]byte{
			"a response": answers, "the server log": {[]byte(e.Logs.String())}, "a store write": e.Writes(), "the webhook queue": queued,
		} {
			if len(haystack) == 0 {
				t.Fatalf("nothing to search in %s", where)
			}
			for _, s := range secrets {
				if needle := find(haystack, s); needle != nil {
					t.Fatalf("%s holds %q (as %q)", where, s, needle)
				}
			}
		}
	}, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}})
}

// The store-write search proves something only if it finds a secret
// written in any encoding, on every backend.
func TestTheWriteSearchFindsAPlantedSecret(t *testing.T) {
	const secret = "PLANTEDsecret0123456789"
	apitest.ForEachBackend(t, func(t *testing.T, e *apitest.Env) {
		for i, v := range []any{"x" + secret, []byte(hex.EncodeToString([]byte(secret))), base64.StdEncoding.EncodeToString([]byte("ab" + secret))} {
			it := store.NewItem(store.Key{PK: "planted", SK: fmt.Sprint(i)})
			it["value"] = v
			if err := e.Store.Put(context.Background(), it); err != nil {
				t.Fatal(err)
			}
			if find(e.Writes(), secret) == nil {
				t.Fatalf("the search missed form %d", i)
			}
		}
	})
}
