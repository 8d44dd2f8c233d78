package servicesapi

import (
	"context"
	"encoding/json"

	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/apitime"
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/services/invoke"
)

// Capability is one invocable operation as a key sees it: an MCP tool.
type Capability = capability

// Tools is the group as the remote MCP transport (package mcpapi) offers it:
// the capabilities a key may call, and the call itself through the same
// pipeline as POST /v1/services/{id}/invoke. The transport lives apart so
// that only the mcp function links the MCP SDK.
type Tools struct{ h *handlers }

// NewTools builds the group's handlers for the MCP transport.
func NewTools(k *api.Kernel, d Deps) *Tools { return &Tools{h: newHandlers(k, d)} }

// AllowedOrigins are the browser origins the operator let call the MCP
// server.
func (t *Tools) AllowedOrigins() []string { return t.h.d.MCPAllowedOrigins }

// Callable lists the capabilities of every service the key sees that this
// deployment can answer: a service whose every call would answer 503 is
// left out, so that an agent does not plan with it.
func (t *Tools) Callable(k *keys.Key) []Capability {
	var out []Capability
	for _, svc := range visibleServices(k) {
		if t.h.available(svc) {
			out = append(out, t.h.capabilitiesOf(k, svc)...)
		}
	}
	return out
}

// Call runs one call of c through the four controls, the request limits of
// the capability and the invoke pipeline, and returns the invoke result's
// JSON (what POST /v1/services/{id}/invoke answers).
func (t *Tools) Call(ctx context.Context, p *api.Principal, c Capability, input json.RawMessage, approvalID string, slots map[string]string) ([]byte, error) {
	k := p.Key()
	if !k.AllowsService(c.ServiceID) {
		return nil, apierr.New(apierr.ServiceDenied, "This key may not use service %s.", c.ServiceID)
	}
	if !k.AllowsOperation(c.CapabilityID) {
		return nil, apierr.New(apierr.OperationDenied, "This key may not call operation %s.", c.CapabilityID)
	}
	release, err := t.h.k.Admit(ctx, p, keys.LimitSelectors("services.invoke", c.ServiceID, c.OperationID))
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := t.h.call(ctx, p, invoke.Call{ServiceID: c.ServiceID, OperationID: c.OperationID, Input: input, ApprovalID: approvalID}, slots)
	if err != nil {
		return nil, err
	}
	return apitime.Marshal(invokeResult{ServiceID: res.ServiceID, OperationID: res.OperationID, Status: "succeeded", Result: res.Output,
		ChargedCredits: float64(res.ChargedMicro) / catalog.MicroPerCredit})
}
