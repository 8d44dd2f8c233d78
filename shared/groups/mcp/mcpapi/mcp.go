// Package mcpapi is the remote MCP transport: the tools of a key
// are its callable capabilities (servicesapi.Tools). It is its own package,
// registered by its own function, so that only that function links the MCP
// SDK.
package mcpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/routes"
	"platformapi/shared/groups/connections"
	"platformapi/shared/groups/services/servicesapi"
)

// Register adds the remote MCP transport to the kernel (its own function).
func Register(k *api.Kernel, d servicesapi.Deps) error {
	h := &handlers{tools: servicesapi.NewTools(k, d)}
	k.Handle(routes.MCP.ID, h.mcpHandler())
	return nil
}

type handlers struct{ tools *servicesapi.Tools }

// mcpHandler serves the remote MCP transport: stateless Streamable HTTP with
// JSON responses, so every POST is complete in itself and works behind API
// Gateway and Lambda. The route policy (key, services:read, actions.list,
// limits) has already run; the server built for the request exposes exactly
// the key's callable capabilities as tools, and every tool call runs the
// same pipeline as POST /v1/services/{id}/invoke.
func (h *handlers) mcpHandler() http.Handler {
	transport := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return h.mcpServer(api.PrincipalFrom(r.Context()))
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: routes.MaxJSONBody})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Browsers must not reach the MCP server with a customer's key
		// unless the operator listed their origin.
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(h.tools.AllowedOrigins(), origin) {
			api.WriteProblem(w, r, apierr.New(apierr.OriginDenied, "Origin %q may not call the MCP server; server-to-server clients send no Origin.", origin))
			return
		}
		rec := &problemWriter{ResponseWriter: w, r: r}
		transport.ServeHTTP(rec, r)
		rec.finish()
	})
}

// problemWriter turns the transport's own plain-text refusals (a malformed
// JSON-RPC message, a wrong Accept header) into problem+json, the shape of
// every other error of the API. Everything else passes through untouched.
type problemWriter struct {
	http.ResponseWriter
	r      *http.Request
	status int
	plain  bytes.Buffer
}

func (p *problemWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		p.status = code
		return
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *problemWriter) Write(b []byte) (int, error) {
	if p.status != 0 {
		return p.plain.Write(b)
	}
	return p.ResponseWriter.Write(b)
}

func (p *problemWriter) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok && p.status == 0 {
		f.Flush()
	}
}

func (p *problemWriter) finish() {
	if p.status == 0 {
		return
	}
	code := map[int]apierr.Code{
		http.StatusBadRequest: apierr.ValidationFailed, http.StatusNotFound: apierr.NotFound,
		http.StatusMethodNotAllowed: apierr.MethodNotAllowed, http.StatusNotAcceptable: apierr.NotAcceptable,
		http.StatusUnsupportedMediaType: apierr.UnsupportedMediaType, http.StatusRequestEntityTooLarge: apierr.PayloadTooLarge,
	}[p.status]
	if code == "" {
		code = apierr.ValidationFailed
	}
	p.Header().Del("Content-Type")
	p.Header().Del("X-Content-Type-Options")
	api.WriteProblem(p.ResponseWriter, p.r, apierr.New(code, "MCP: %s", strings.TrimSpace(p.plain.String())))
}

// toolNameRE is the tool-name rule of the major LLM tool-calling APIs
// (dots are refused there), so every agent can call every tool.
var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ToolName maps a capability to its MCP tool name: the service id, two
// underscores, the operation id with dots as underscores
// (cloud-superbrain__memory_write). A name over 64 characters keeps its
// first 55 and a hash of the whole, so it stays unique.
func ToolName(serviceID, operationID string) string {
	name := serviceID + "__" + strings.ReplaceAll(operationID, ".", "_")
	if len(name) > 64 {
		sum := sha256.Sum256([]byte(name))
		name = name[:55] + "_" + hex.EncodeToString(sum[:4])
	}
	return name
}

// toolSchema is the tool's input: the operation's own input schema, with
// approvalId beside the operation's fields where it is approval-gated.
func toolSchema(c servicesapi.Capability) map[string]any {
	schema := map[string]any{}
	if len(c.InputSchema) == 0 || json.Unmarshal(c.InputSchema, &schema) != nil || schema["type"] != "object" {
		schema = map[string]any{"type": "object"}
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if c.RequiresApproval {
		props[approvalArg] = map[string]any{"type": "string", "description": "An approved, unused approval (apr_…) for exactly the other arguments"}
	}
	props[connectionsArg] = map[string]any{
		"type": "object", "maxProperties": connections.MaxSlots, "additionalProperties": map[string]any{"type": "string"},
		"description": "Protected connections the service uses, by slot: {\"<slot>\": \"con_…\"}",
	}
	schema["properties"] = props
	return schema
}

// The tool arguments beside the operation's own input: the approval of a
// gated call, and the protected connections the call names.
const (
	approvalArg    = "approvalId"
	connectionsArg = "connections"
)

func (h *handlers) mcpServer(p *api.Principal) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "platform-api", Version: "1.0.0"}, nil)
	k := p.Key()
	if !k.HasScope("services:invoke") {
		return srv
	}
	for _, c := range h.tools.Callable(k) {
		name := ToolName(c.ServiceID, c.OperationID)
		if !toolNameRE.MatchString(name) {
			continue // a service or operation id outside the catalogue's rules
		}
		desc := c.Summary + " (" + c.CapabilityID + ", up to " + trimFloat(c.PriceCredits) + " credits)"
		srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: toolSchema(c)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h.callTool(ctx, p, c, req.Params.Arguments), nil
		})
	}
	return srv
}

// callTool runs one tool call as servicesapi.Tools.Call. Failures are tool errors whose
// text is the problem+json the HTTP API would have answered.
func (h *handlers) callTool(ctx context.Context, p *api.Principal, c servicesapi.Capability, args json.RawMessage) *mcp.CallToolResult {
	var fields map[string]json.RawMessage
	if len(args) == 0 {
		args = []byte("{}")
	}
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		return toolError(apierr.Invalid("Tool arguments must be a JSON object: the operation's input.", apierr.Field("arguments", "not a JSON object")))
	}
	var approvalID string
	if raw, ok := fields[approvalArg]; ok && c.RequiresApproval {
		if err := json.Unmarshal(raw, &approvalID); err != nil {
			return toolError(apierr.Invalid("approvalId must be a string.", apierr.Field("arguments.approvalId", "not a string")))
		}
		delete(fields, approvalArg)
	}
	var slots map[string]string
	if raw, ok := fields[connectionsArg]; ok {
		if err := json.Unmarshal(raw, &slots); err != nil {
			return toolError(apierr.Invalid("connections must map slots to connection ids.", apierr.Field("arguments.connections", "not an object of strings")))
		}
		delete(fields, connectionsArg)
	}
	input, _ := json.Marshal(fields)
	out, err := h.tools.Call(ctx, p, c, input, approvalID, slots)
	if err != nil {
		return toolError(err)
	}
	var structured any
	_ = json.Unmarshal(out, &structured)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: structured}
}

func toolError(err error) *mcp.CallToolResult {
	e := api.ToAPIError(err)
	text, _ := json.Marshal(e)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
