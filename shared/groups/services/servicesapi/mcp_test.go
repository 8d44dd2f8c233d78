package servicesapi_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"platformapi/shared/harness/apitest"
)

// bearer adds the API key to every request of the MCP client.
type bearer struct{ secret string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.secret != "" {
		r.Header.Set("Authorization", "Bearer "+b.secret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(e *apitest.Env, t *testing.T, secret, path string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "platform-api-test", Version: "1.0.0"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: e.URL + path, HTTPClient: &http.Client{Transport: bearer{secret}}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
}

func TestMCPClientListsAndCallsTheKeysCapabilities(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	agent, _ := e.Child(root, map[string]any{
		"scopes":            []string{"services:read", "services:invoke"},
		"allowedOperations": []string{"actions.list", "services.invoke.cloud-superbrain.memory.write", "services.invoke.cloud-superbrain.memory.search"},
	})
	for _, path := range []string{"/mcp", "/v1/mcp"} {
		session, err := mcpSession(e, t, agent, path)
		if err != nil {
			t.Fatalf("%s: initialize: %v", path, err)
		}
		ctx := context.Background()
		tools, err := session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != "cloud-superbrain__memory_search,cloud-superbrain__memory_write" && strings.Join(names, ",") != "cloud-superbrain__memory_write,cloud-superbrain__memory_search" {
			t.Fatalf("tools = %v, want exactly the key's two capabilities", names)
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cloud-superbrain__memory_write", Arguments: map[string]any{"text": "written over mcp"}})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(text, `"chargedCredits":0.01`) || !strings.Contains(text, "memoryId") {
			t.Fatalf("tool result = %s", text)
		}
		// A tool call runs the pipeline: a bad input is the service's 400, as a tool error.
		res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "cloud-superbrain__memory_write", Arguments: map[string]any{"text": ""}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "validation_failed") {
			t.Fatalf("bad input: %v %+v", err, res)
		}
		session.Close()
	}
	// Charged exactly like the HTTP invoke: two writes of 0.01.
	if got := e.Balance(root); got != 0.98 {
		t.Fatalf("balance = %v, want 0.98", got)
	}
}

func TestMCPIsRefusedWithoutAKeyOrWithoutActionsList(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	noList, _ := e.Child(root, map[string]any{"scopes": []string{"services:read", "services:invoke"}, "allowedOperations": []string{"services.invoke.cloud-superbrain.memory.write"}})
	noScope, _ := e.Child(root, map[string]any{"scopes": []string{"services:invoke"}})
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	post := func(key string, headers map[string]string) *apitest.Resp {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		for k, v := range headers {
			h[k] = v
		}
		return e.Do(apitest.Req{Method: "POST", Path: "/mcp", Key: key, Body: init, Headers: h})
	}
	e.Must(post("", nil), 401, "missing_credentials")
	e.Must(post(noList, nil), 403, "operation_denied")
	e.Must(post(noScope, nil), 403, "scope_denied")
	e.Must(post(root, map[string]string{"Origin": "https://evil.example"}), 403, "origin_denied")
	if _, err := mcpSession(e, t, "", "/mcp"); err == nil {
		t.Fatal("an MCP client without a key connected")
	}
	if r := post(root, nil); r.Status != 200 {
		t.Fatalf("a full key was refused: %d %s", r.Status, r.Raw)
	}
}

// Tool names follow the rule of the major LLM tool-calling APIs, and a
// tool's arguments are the operation's own input, with approvalId beside
// them for an approval-gated operation.
func TestMCPToolsAreUsableByEveryAgent(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	session, err := mcpSession(e, t, root, "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	ctx := context.Background()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	var gated *mcp.Tool
	for _, tl := range tools.Tools {
		if !rule.MatchString(tl.Name) {
			t.Errorf("tool name %q breaks ^[a-zA-Z0-9_-]{1,64}$", tl.Name)
		}
		schema, _ := tl.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if _, wrapped := props["input"]; wrapped {
			t.Errorf("%s: arguments wrapped in input", tl.Name)
		}
		if tl.Name == "cloud-superbrain__memory_delete" {
			gated = tl
			if _, ok := props["approvalId"]; !ok {
				t.Errorf("the gated tool takes no approvalId: %v", props)
			}
		}
	}
	if gated == nil {
		t.Fatal("memory.delete is not offered")
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cloud-superbrain__memory_write", Arguments: map[string]any{"text": "to forget"}})
	if err != nil || res.IsError {
		t.Fatalf("write: %v %+v", err, res)
	}
	memoryID := res.StructuredContent.(map[string]any)["result"].(map[string]any)["memoryId"].(string)
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: gated.Name, Arguments: map[string]any{"memoryId": memoryID}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "approval_required") {
		t.Fatalf("delete without approval: %v %+v", err, res)
	}
	apr := e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/service-actions", Key: root, Idem: apitest.Idem(),
		Body: map[string]any{"serviceId": "cloud-superbrain", "operationId": "memory.delete", "input": map[string]any{"memoryId": memoryID}}}), 201)
	e.Must(e.Do(apitest.Req{Method: "POST", Path: "/v1/approvals/" + apr.Str("id"), Key: root, Idem: apitest.Idem(), Body: map[string]any{"decision": "approve"}}), 200)
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: gated.Name, Arguments: map[string]any{"memoryId": memoryID, "approvalId": apr.Str("id")}})
	if err != nil || res.IsError {
		t.Fatalf("approved delete: %v %+v", err, res)
	}
}

// Only POST reaches the MCP transport; other methods are 405 with Allow, and
// the transport's own refusals are problem+json like every other error.
func TestMCPAnswersOtherMethodsAndMalformedRequestsAsProblems(t *testing.T) {
	e := apitest.New(t)
	root, _ := e.RootKey(1, nil)
	for _, path := range []string{"/mcp", "/v1/mcp"} {
		for _, m := range []string{"GET", "DELETE"} {
			r := e.Must(e.Do(apitest.Req{Method: m, Path: path, Key: root}), 405, "method_not_allowed")
			if r.Header.Get("Allow") != "POST" {
				t.Errorf("%s %s: Allow %q", m, path, r.Header.Get("Allow"))
			}
		}
	}
	r := e.Do(apitest.Req{Method: "POST", Path: "/mcp", Key: root, Body: []byte(`{not json`),
		Headers: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}})
	if r.Status < 400 || r.Status >= 500 || r.Header.Get("Content-Type") != "application/problem+json" || r.Code() == "" {
		t.Fatalf("malformed request: %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
}
