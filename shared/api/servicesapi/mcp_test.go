package servicesapi_test

import (
	"context"
	"net/http"
	"platformapi/shared/api/apitest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
		if strings.Join(names, ",") != "cloud-superbrain.memory.search,cloud-superbrain.memory.write" && strings.Join(names, ",") != "cloud-superbrain.memory.write,cloud-superbrain.memory.search" {
			t.Fatalf("tools = %v, want exactly the key's two capabilities", names)
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cloud-superbrain.memory.write", Arguments: map[string]any{"input": map[string]any{"text": "written over mcp"}}})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(text, `"chargedCredits":0.01`) || !strings.Contains(text, "memoryId") {
			t.Fatalf("tool result = %s", text)
		}
		// A tool call runs the pipeline: a bad input is the service's 400, as a tool error.
		res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "cloud-superbrain.memory.write", Arguments: map[string]any{"input": map[string]any{"text": ""}}})
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
