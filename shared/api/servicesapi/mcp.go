package servicesapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"platformapi/shared/api"
	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/invoke"
	"platformapi/shared/keys"
	"platformapi/shared/routes"
)

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
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(h.d.MCPAllowedOrigins, origin) {
			api.WriteProblem(w, r, apierr.New(apierr.OriginDenied, "Origin %q may not call the MCP server; server-to-server clients send no Origin.", origin))
			return
		}
		transport.ServeHTTP(w, r)
	})
}

// toolName maps a capability to an MCP tool name (letters, digits, _-.).
func toolName(serviceID, operationID string) string { return serviceID + "." + operationID }

func (h *handlers) mcpServer(p *api.Principal) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "platform-api", Version: "1.0.0"}, nil)
	k := p.Key()
	if !k.HasScope("services:invoke") {
		return srv
	}
	for _, svc := range visibleServices(k) {
		for _, c := range h.capabilitiesOf(k, svc) {
			c := c
			input := json.RawMessage(`{"type":"object"}`)
			if len(c.InputSchema) > 0 {
				input = c.InputSchema
			}
			props := map[string]any{"input": input}
			if c.RequiresApproval {
				props["approvalId"] = map[string]any{"type": "string", "description": "An approved, unused approval for exactly this input"}
			}
			desc := c.Summary + " (up to " + trimFloat(c.PriceCredits) + " credits)"
			srv.AddTool(&mcp.Tool{
				Name: toolName(c.ServiceID, c.OperationID), Description: desc,
				InputSchema: map[string]any{"type": "object", "properties": props, "required": []string{"input"}},
			}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return h.callTool(ctx, p, c, req.Params.Arguments), nil
			})
		}
	}
	return srv
}

// callTool runs one tool call through the four controls, the request limits
// of the capability and the invoke pipeline. Failures are tool errors whose
// text is the problem+json the HTTP API would have answered.
func (h *handlers) callTool(ctx context.Context, p *api.Principal, c capability, args json.RawMessage) *mcp.CallToolResult {
	var in struct {
		Input      json.RawMessage `json:"input"`
		ApprovalID string          `json:"approvalId"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return toolError(apierr.Invalid("Tool arguments must be an object with input.", apierr.Field("arguments", "%s", err.Error())))
	}
	k := p.Key()
	if !k.AllowsService(c.ServiceID) {
		return toolError(apierr.New(apierr.ServiceDenied, "This key may not use service %s.", c.ServiceID))
	}
	if !k.AllowsOperation(c.CapabilityID) {
		return toolError(apierr.New(apierr.OperationDenied, "This key may not call operation %s.", c.CapabilityID))
	}
	release, err := h.k.Admit(ctx, p, keys.LimitSelectors("services.invoke", c.ServiceID, c.OperationID))
	if err != nil {
		return toolError(err)
	}
	defer release()
	res, err := h.pipeline.Run(ctx, invokeCaller(ctx, p), invoke.Call{ServiceID: c.ServiceID, OperationID: c.OperationID, Input: in.Input, ApprovalID: in.ApprovalID})
	if err != nil {
		return toolError(err)
	}
	api.AddCharged(ctx, res.ChargedMicro)
	out, _ := json.Marshal(invokeResult{ServiceID: res.ServiceID, OperationID: res.OperationID, Status: "succeeded", Result: res.Output,
		ChargedCredits: float64(res.ChargedMicro) / catalog.MicroPerCredit})
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
