// Package servicesapi is the managed-services endpoint group:
// services, capabilities and actions as a key sees them, invocation through
// the invoke pipeline, and the remote MCP server (its own function) whose
// tools are the same capabilities.
package servicesapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/api"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/approvals"
	"platformapi/shared/groups/connections"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/services/invoke"
	"platformapi/shared/groups/services/superbrain"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
	// Services reaches the managed services; a service without an invoker
	// is unavailable (503).
	Services upstream.Router
	// Schemas publishes operations' JSON Schemas in /capabilities, keyed
	// "<serviceId>/<operationId>".
	Schemas map[string]Schema
	// MCPAllowedOrigins are the browser origins that may call the MCP
	// server (MCP_ALLOWED_ORIGINS); server-to-server clients send none.
	MCPAllowedOrigins []string
	// Sealer opens the protected connections a call names; nil: a call
	// naming connections answers 503.
	Sealer envelope.Sealer
}

// Schema is one operation's input and output JSON Schema.
type Schema struct {
	Input, Output json.RawMessage
}

type handlers struct {
	k        *api.Kernel
	d        Deps
	pipeline *invoke.Pipeline
	// conns works on the store itself, never inside an idempotency unit:
	// resolving records lastUsedAt, which must not fail the unit's commit.
	conns *connections.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := newHandlers(k, d)
	api.Register(k, "services.list", http.StatusOK, h.listServices)
	api.Register(k, "capabilities.list", http.StatusOK, h.listCapabilities)
	api.Register(k, "capabilities.list.byService", http.StatusOK, h.listServiceCapabilities)
	api.Register(k, "actions.list", http.StatusOK, h.listActions)
	api.Register(k, "services.invoke", http.StatusOK, h.invoke)
	return nil
}

func newHandlers(k *api.Kernel, d Deps) *handlers {
	return &handlers{k: k, d: d, pipeline: &invoke.Pipeline{
		Ledger: credits.NewLedger(d.Store, k.Now), Limits: k.Limits(), Approvals: approvals.NewRepo(d.Store, k.Now),
		Services: d.Services, Timeout: k.RequestTimeout() - 2*time.Second,
	}, conns: connections.NewRepo(d.Store, d.Sealer, k.Now)}
}

// serviceView is a managed service as a key sees it.
type serviceView struct {
	ServiceID   string `json:"serviceId"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Available   bool   `json:"available" doc:"Whether this deployment can serve it now"`
}

// capability is one invocable operation as a key sees it.
type capability struct {
	CapabilityID     string          `json:"capabilityId" doc:"The exact operation selector, services.invoke.<serviceId>.<operationId>"`
	ServiceID        string          `json:"serviceId"`
	OperationID      string          `json:"operationId"`
	Summary          string          `json:"summary"`
	PriceCredits     float64         `json:"priceCredits" doc:"Maximum charge; the exact charge is what the service reports"`
	RequiresApproval bool            `json:"requiresApproval"`
	Durable          bool            `json:"durable" doc:"Can also run as a durable run"`
	InputSchema      json.RawMessage `json:"inputSchema,omitempty" doc:"JSON Schema of input"`
	OutputSchema     json.RawMessage `json:"outputSchema,omitempty" doc:"JSON Schema of result"`
}

// action is one thing the key can call after all four controls.
type action struct {
	OperationID string `json:"operationId" doc:"Operation id or exact capability selector"`
	Kind        string `json:"kind" enum:"endpoint,capability"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	ServiceID   string `json:"serviceId,omitempty"`
	Limited     bool   `json:"limited" doc:"Whether a limit of the key or an ancestor applies (it may refuse with 429 when exhausted)"`
}

// available reports whether this deployment can answer the service now.
// The API itself and the services its own endpoint groups serve (their
// routes name them) are registered in every deployment; a service reached
// through services.invoke needs an invoker here. An endpoint group whose
// backend is not configured answers 503 per call, as the catalogue says.
func (h *handlers) available(svc catalog.Service) bool {
	return svc.ID == catalog.PlatformAPI || servedByEndpoints[svc.ID] || h.d.Services[svc.ID] != nil
}

// servedByEndpoints are the services that own routes of the API.
var servedByEndpoints = func() map[string]bool {
	out := map[string]bool{}
	for _, rt := range routes.Table {
		if rt.Service != "" {
			out[rt.Service] = true
		}
	}
	return out
}()

func visibleServices(k *keys.Key) []catalog.Service {
	var out []catalog.Service
	for _, svc := range catalog.Services() {
		if k.AllowsService(svc.ID) {
			out = append(out, svc)
		}
	}
	return out
}

func (h *handlers) capabilitiesOf(k *keys.Key, svc catalog.Service) []capability {
	var out []capability
	for _, o := range svc.Operations {
		id := keys.RequestOperation("services.invoke", svc.ID, o.ID)
		if !o.Invocable || !k.AllowsOperation(id) {
			continue
		}
		c := capability{CapabilityID: id, ServiceID: svc.ID, OperationID: o.ID, Summary: o.Summary,
			PriceCredits: float64(o.PriceMicro) / catalog.MicroPerCredit, RequiresApproval: o.Approval, Durable: o.Durable}
		if sc, ok := h.d.Schemas[svc.ID+"/"+o.ID]; ok {
			c.InputSchema, c.OutputSchema = sc.Input, sc.Output
		}
		out = append(out, c)
	}
	return out
}

func (h *handlers) listServices(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[serviceView]], error) {
	var out []serviceView
	for _, svc := range visibleServices(api.PrincipalFrom(ctx).Key()) {
		out = append(out, serviceView{ServiceID: svc.ID, Name: svc.Name, Description: svc.Description, Available: h.available(svc)})
	}
	p, err := api.PageOf(out, in)
	return api.Reply(p), err
}

func (h *handlers) listCapabilities(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[capability]], error) {
	k := api.PrincipalFrom(ctx).Key()
	var out []capability
	for _, svc := range visibleServices(k) {
		out = append(out, h.capabilitiesOf(k, svc)...)
	}
	p, err := api.PageOf(out, in)
	return api.Reply(p), err
}

type serviceCapabilitiesInput struct {
	ServiceID string `path:"serviceId"`
	api.ListInput
}

func (h *handlers) listServiceCapabilities(ctx context.Context, in *serviceCapabilitiesInput) (*api.Body[api.Page[capability]], error) {
	svc, _ := catalog.Lookup(in.ServiceID) // existence and access were checked by the route policy
	p, err := api.PageOf(h.capabilitiesOf(api.PrincipalFrom(ctx).Key(), svc), &in.ListInput)
	return api.Reply(p), err
}

// Actions lists everything the key can call: every endpoint whose scope,
// service access and operation access allow it, and every capability its
// services and operations allow; it marks those a limit applies to.
func (h *handlers) actions(p *api.Principal) []action {
	k := p.Key()
	limited := func(ops []string) bool {
		for _, c := range p.Chain {
			for sel := range c.Limits {
				if limits.Covers(sel, ops) {
					return true
				}
			}
		}
		return false
	}
	var out []action
	for _, rt := range routes.Table {
		if rt.Operation == "services.invoke" || rt.Operation == "runs.create" {
			continue // listed per capability below
		}
		if !hasScopes(k, rt.Scopes) || rt.Service != "" && !k.AllowsService(rt.Service) || !k.AllowsOperation(rt.Operation) {
			continue
		}
		out = append(out, action{OperationID: rt.Operation, Kind: "endpoint", Method: rt.Method, Path: "/" + api.APIVersion + rt.Path, ServiceID: rt.Service, Limited: limited([]string{rt.Operation})})
	}
	for _, svc := range visibleServices(k) {
		for _, c := range h.capabilitiesOf(k, svc) {
			if hasScopes(k, []string{"services:invoke"}) {
				out = append(out, action{OperationID: c.CapabilityID, Kind: "capability", Method: http.MethodPost, Path: "/" + api.APIVersion + "/services/" + svc.ID + "/invoke", ServiceID: svc.ID,
					Limited: limited(keys.LimitSelectors("services.invoke", svc.ID, c.OperationID))})
			}
		}
		for _, o := range svc.Operations {
			run := keys.RequestOperation("runs.create", svc.ID, o.ID)
			if o.Durable && hasScopes(k, []string{"runs:write"}) && k.AllowsOperation(run) {
				out = append(out, action{OperationID: run, Kind: "capability", Method: http.MethodPost, Path: "/" + api.APIVersion + "/runs", ServiceID: svc.ID,
					Limited: limited(keys.LimitSelectors("runs.create", svc.ID, o.ID))})
			}
		}
	}
	return out
}

func hasScopes(k *keys.Key, scopes []string) bool {
	for _, sc := range scopes {
		if !k.HasScope(sc) {
			return false
		}
	}
	return true
}

func (h *handlers) listActions(ctx context.Context, in *api.ListInput) (*api.Body[api.Page[action]], error) {
	p, err := api.PageOf(h.actions(api.PrincipalFrom(ctx)), in)
	return api.Reply(p), err
}

// --- Invocation ---

type invokeRequest struct {
	OperationID string          `json:"operationId" minLength:"1" maxLength:"100" doc:"An operation of the service, e.g. memory.write"`
	Input       json.RawMessage `json:"input,omitempty" doc:"The operation's input (see the capability's inputSchema)"`
	ApprovalID  string          `json:"approvalId,omitempty" doc:"An approved, unused approval for exactly this service, operation and input (approval-gated operations)"`
	Connections connectionSlots `json:"connections,omitempty"`
}

// connectionSlots names the protected connections a call uses, by slot.
type connectionSlots map[string]string

func (connectionSlots) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, MaxProperties: new(connections.MaxSlots),
		Description: "Protected connections the service uses for this call, by slot name (the service documents its slots): `{\"<slot>\": \"con_…\"}`. " +
			"Each must be in the caller's account and project, `active` (else `409 connection_disabled`) and list this service in its `serviceIds` (else `403 connection_not_allowed`); " +
			"only the service receives the credentials. A `401` from the service marks the connections' `statusReason`.",
		AdditionalProperties: &huma.Schema{Type: huma.TypeString, Pattern: "^con_", MaxLength: new(64)},
		Examples:             []any{map[string]any{"vendor": "con_01JQ3Y6V1W2X3Y4Z5A6B7C8D9E"}}}
}

type invokeInput struct {
	ServiceID string `path:"serviceId"`
	Body      invokeRequest
}

type invokeResult struct {
	ServiceID      string          `json:"serviceId"`
	OperationID    string          `json:"operationId"`
	Status         string          `json:"status" enum:"succeeded" doc:"The managed service's status for the call"`
	Result         json.RawMessage `json:"result"`
	ChargedCredits float64         `json:"chargedCredits" doc:"Exact amount charged, as reported by the service"`
}

type invokeOutput struct {
	Charged  string `header:"X-Service-Credits-Charged" doc:"Authoritative charge in credits"`
	Upstream string `header:"X-Service-Upstream-Request-Id" doc:"The managed service's correlation id, when it has one"`
	Body     invokeResult
}

func (h *handlers) invoke(ctx context.Context, in *invokeInput) (*invokeOutput, error) {
	p := api.PrincipalFrom(ctx)
	res, err := h.call(ctx, p, invoke.Call{ServiceID: in.ServiceID, OperationID: in.Body.OperationID, Input: in.Body.Input, ApprovalID: in.Body.ApprovalID, CallID: api.CallID(ctx)}, in.Body.Connections)
	if err != nil {
		return nil, err
	}
	charged := float64(res.ChargedMicro) / catalog.MicroPerCredit
	h.k.Publish(ctx, eventServiceInvoked, map[string]any{
		"serviceId": res.ServiceID, "operationId": res.OperationID, "chargedCredits": charged, "upstreamRequestId": res.UpstreamRequestID,
	})
	return &invokeOutput{
		Charged: strconv.FormatFloat(charged, 'f', -1, 64), Upstream: res.UpstreamRequestID,
		Body: invokeResult{ServiceID: res.ServiceID, OperationID: res.OperationID, Status: "succeeded", Result: res.Output, ChargedCredits: charged},
	}, nil
}

// call runs one call through the pipeline with the connections it names:
// resolved (checked and opened) once the service and operation are known,
// so an unknown operation is reported as such; marked when the service
// refused their credentials.
func (h *handlers) call(ctx context.Context, p *api.Principal, c invoke.Call, slots map[string]string) (*invoke.Result, error) {
	caller := invokeCaller(ctx, p)
	if len(slots) > 0 {
		if _, _, err := invoke.Operation(c.ServiceID, c.OperationID); err != nil {
			return nil, err
		}
		creds, err := h.conns.Resolve(ctx, caller.AccountID, caller.ProjectID, c.ServiceID, slots)
		if err != nil {
			return nil, err
		}
		c.Connections = creds
	}
	res, err := h.pipeline.Run(ctx, caller, c)
	if err != nil {
		if markErr := h.conns.MarkRejected(context.WithoutCancel(ctx), caller.AccountID, caller.ProjectID, c.Connections, err); markErr != nil {
			api.Logger(ctx).Error("marking rejected connections failed", "error", markErr.Error())
		}
		return nil, err
	}
	return res, nil
}

// invokeCaller is the principal as the invoke pipeline sees it.
func invokeCaller(ctx context.Context, p *api.Principal) invoke.Caller {
	return invoke.Caller{AccountID: p.Key().AccountID, ProjectID: p.ProjectID, EndUser: p.EndUser, RequestID: api.RequestID(ctx), Chain: p.LimitOwners()}
}

// BuiltinSchemas are the schemas of the services built into every
// deployment (superbrain.Router).
func BuiltinSchemas() map[string]Schema {
	out := map[string]Schema{}
	for op, sc := range superbrain.Schemas() {
		out[superbrain.ServiceID+"/"+op] = Schema{Input: sc.Input, Output: sc.Output}
	}
	return out
}

// ParseOrigins reads MCP_ALLOWED_ORIGINS: origins separated by commas.
func ParseOrigins(list string) []string {
	return slices.DeleteFunc(strings.Split(list, ","), func(s string) bool { return s == "" })
}
