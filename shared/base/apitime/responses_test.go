package apitime_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"platformapi/shared/adapters/work"
	"platformapi/shared/base/routes"
	"platformapi/shared/groups/databases/databasesapi/dbtest"
	"platformapi/shared/groups/runs"
	"platformapi/shared/harness/apitest"
)

var (
	// timeLike is any string a reader would take for an RFC 3339 time.
	timeLike = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}`)
	// apiTime is the one form the API may write.
	apiTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// timeChecker walks JSON documents and reports every time-like string value
// not in the API's form, unless the client sent that exact string.
type timeChecker struct {
	t       *testing.T
	sent    map[string]bool
	checked int
}

func (c *timeChecker) send(v any) {
	switch x := v.(type) {
	case string:
		c.sent[x] = true
	case map[string]any:
		for _, e := range x {
			c.send(e)
		}
	case []any:
		for _, e := range x {
			c.send(e)
		}
	}
}

func (c *timeChecker) check(where string, raw []byte) {
	c.t.Helper()
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return // not JSON (file content, an archive)
	}
	c.walk(where, "", doc)
}

func (c *timeChecker) walk(where, path string, v any) {
	c.t.Helper()
	switch x := v.(type) {
	case string:
		if !timeLike.MatchString(x) || c.sent[x] {
			// Text inside a string (an MCP result's JSON) is a document too.
			if strings.HasPrefix(x, "{") {
				c.check(where+" "+path, []byte(x))
			}
			return
		}
		c.checked++
		if !apiTime.MatchString(x) {
			c.t.Errorf("%s: %s = %q, want UTC with three fractional digits and Z", where, path, x)
		}
	case map[string]any:
		for k, e := range x {
			c.walk(where, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			c.walk(where, path+"[]", e)
		}
	}
}

// TestEveryTimeTheAPIWritesIsUTCMillisecondsZ runs a broad scenario (keys,
// projects, webhooks, invocations, approvals, files, connections, runs,
// trading, databases, MCP) with the clock on 960, 961 and 970 ms, where
// RFC3339Nano would write .96Z, .961Z and .97Z, then reads every list of the
// route table and a delivered webhook payload: every time-like string the
// API wrote has exactly three fractional digits and Z. Strings the client
// sent come back as sent.
func TestEveryTimeTheAPIWritesIsUTCMillisecondsZ(t *testing.T) {
	var mu sync.Mutex
	var payloads [][]byte
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		payloads = append(payloads, b)
		mu.Unlock()
	}))
	defer receiver.Close()
	e := apitest.New(t, apitest.Options{Env: map[string]string{"ALLOW_PRIVATE_WEBHOOKS": "true"}, Parts: []apitest.Part{dbtest.On(0)}})
	c := &timeChecker{t: t, sent: map[string]bool{}}
	do := func(r apitest.Req, status int) *apitest.Resp {
		t.Helper()
		c.send(r.Body)
		for _, h := range r.Headers {
			c.sent[h] = true
		}
		res := e.Must(e.Do(r), status)
		c.check(r.Method+" "+r.Path, res.Raw)
		return res
	}
	e.Clock.Advance(960 * time.Millisecond)
	root, rec := e.RootKey(100, nil)
	c.check("POST /v1/api-keys", rec.Raw)
	do(apitest.Req{Method: "POST", Path: "/v1/webhooks", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"url": receiver.URL, "events": []string{"*"}, "description": "2026-01-02T03:04:05Z, as the client wrote it"}}, 201)
	e.Clock.Advance(time.Millisecond)
	e.StartWorker(work.Webhooks.Consumer)
	e.StartWorker(runs.Queue.Consumer)
	do(apitest.Req{Method: "POST", Path: "/v1/api-keys", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"scopes": []string{"services:read", "services:invoke"}, "expiresAt": "2099-01-01T00:00:00Z"}}, 201)
	project := do(apitest.Req{Method: "POST", Path: "/v1/projects", Key: root, Idem: apitest.Idem(), Body: map[string]any{"name": "times"}}, 201)
	do(apitest.Req{Method: "GET", Path: "/v1/projects/" + project.Str("id"), Key: root}, 200)
	e.Clock.Advance(9 * time.Millisecond) // .970: from here on a trailing zero again
	for _, op := range []struct {
		id    string
		input map[string]any
	}{{"memory.write", map[string]any{"text": "remember the time"}}, {"memory.list", map[string]any{}}} {
		do(apitest.Req{Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: root, Idem: apitest.Idem(),
			Body: map[string]any{"operationId": op.id, "input": op.input}}, 200)
	}
	do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": map[string]any{"memoryId": "m"}}}, 201)
	file := do(apitest.Req{Method: "POST", Path: "/v1/files", Key: root, Idem: apitest.Idem(),
		Headers: map[string]string{"Content-Type": "text/plain", "X-File-Name": "t.txt"}, Body: []byte("time")}, 201)
	do(apitest.Req{Method: "GET", Path: "/v1/files/" + file.Str("id"), Key: root}, 200)
	conn := do(apitest.Req{Method: "POST", Path: "/v1/connections", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"label": "x", "type": "bearer", "serviceIds": []string{"core-research"}, "credentials": map[string]any{"token": "t"}}}, 201)
	do(apitest.Req{Method: "GET", Path: "/v1/connections/" + conn.Str("id"), Key: root}, 200)
	run := do(apitest.Req{Method: "POST", Path: "/v1/runs", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.search", "input": map[string]any{"query": "time"}}}, 202)
	c.check("GET /v1/runs/{id} (finished)", e.WaitRun(root, run.Str("id")).Raw)
	do(apitest.Req{Method: "POST", Path: "/v1/trading/orders", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"symbol": "ETH-USD", "side": "buy", "type": "market", "qty": "1", "timeInForce": "ioc"}}, 201)
	do(apitest.Req{Method: "POST", Path: "/v1/databases/account", Key: root, Idem: apitest.Idem(), Body: map[string]any{}}, 201)
	do(apitest.Req{Method: "GET", Path: "/v1/databases/account", Key: root}, 200)
	mcpToolCall(t, e, root, c)
	e.Audit.Catchup(context.Background())

	for _, rt := range routes.Table {
		if rt.Method != http.MethodGet || strings.Contains(rt.Path, "{") {
			continue
		}
		// Any answer: a list that needs a chain or a query parameter
		// answers a problem, whose times are checked too.
		path := "/v1" + rt.Path + "?limit=100"
		c.check("GET "+path, e.Do(apitest.Req{Method: "GET", Path: path, Key: root}).Raw)
	}
	var got [][]byte
	for range 200 {
		mu.Lock()
		got = append(got[:0], payloads...)
		mu.Unlock()
		if len(got) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) == 0 {
		t.Fatal("no webhook payload was delivered")
	}
	for _, p := range got {
		c.check("webhook payload", p)
	}
	if c.checked < 50 {
		t.Fatalf("checked %d times; the scenario wrote too few", c.checked)
	}
}

// mcpToolCall lists memories through MCP, whose result is the service's
// output inside a tool result.
func mcpToolCall(t *testing.T, e *apitest.Env, key string, c *timeChecker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "times", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer(key)}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cloud-superbrain__memory_list", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("memory.list over MCP: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res)
	c.check("MCP tools/call", raw)
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
