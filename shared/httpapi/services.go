package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/invoke"
	"platformapi/shared/keys"
	"platformapi/shared/limits"
	"platformapi/shared/routes"
	"platformapi/shared/webhooks"
)

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

func (s *Server) available(svc catalog.Service) bool { return s.deps.Services[svc.ID] != nil }

func (s *Server) visibleServices(k *keys.Key) []catalog.Service {
	var out []catalog.Service
	for _, svc := range catalog.Services() {
		if k.AllowsService(svc.ID) {
			out = append(out, svc)
		}
	}
	return out
}

func (s *Server) capabilitiesOf(k *keys.Key, svc catalog.Service) []capability {
	var out []capability
	for _, o := range svc.Operations {
		id := keys.RequestOperation("services.invoke", svc.ID, o.ID)
		if !o.Invocable || !k.AllowsOperation(id) {
			continue
		}
		c := capability{CapabilityID: id, ServiceID: svc.ID, OperationID: o.ID, Summary: o.Summary,
			PriceCredits: float64(o.PriceMicro) / catalog.MicroPerCredit, RequiresApproval: o.Approval, Durable: o.Durable}
		if sc, ok := s.deps.Schemas[svc.ID+"/"+o.ID]; ok {
			c.InputSchema, c.OutputSchema = sc.Input, sc.Output
		}
		out = append(out, c)
	}
	return out
}

// pageOf pages a computed list by position; the cursor is the last position.
func pageOf[T any](all []T, in *ListInput) (Page[T], error) {
	start := 0
	if in.Cursor != "" {
		n, err := strconv.Atoi(in.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return Page[T]{}, apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
		}
		start = n
	}
	end := min(len(all), start+in.Limit)
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return page(all[start:end], next), nil
}

func (s *Server) listServices(ctx context.Context, in *ListInput) (*body[Page[serviceView]], error) {
	var out []serviceView
	for _, svc := range s.visibleServices(principal(ctx).Key()) {
		out = append(out, serviceView{ServiceID: svc.ID, Name: svc.Name, Description: svc.Description, Available: s.available(svc)})
	}
	p, err := pageOf(out, in)
	return &body[Page[serviceView]]{Body: p}, err
}

func (s *Server) listCapabilities(ctx context.Context, in *ListInput) (*body[Page[capability]], error) {
	k := principal(ctx).Key()
	var out []capability
	for _, svc := range s.visibleServices(k) {
		out = append(out, s.capabilitiesOf(k, svc)...)
	}
	p, err := pageOf(out, in)
	return &body[Page[capability]]{Body: p}, err
}

type serviceCapabilitiesInput struct {
	ServiceID string `path:"serviceId"`
	ListInput
}

func (s *Server) listServiceCapabilities(ctx context.Context, in *serviceCapabilitiesInput) (*body[Page[capability]], error) {
	svc, _ := catalog.Lookup(in.ServiceID) // existence and access were checked by the route policy
	p, err := pageOf(s.capabilitiesOf(principal(ctx).Key(), svc), &in.ListInput)
	return &body[Page[capability]]{Body: p}, err
}

// Actions lists everything the key can call: every endpoint whose scope,
// service access and operation access allow it, and every capability its
// services and operations allow; it marks those a limit applies to.
func (s *Server) Actions(p *Principal) []action {
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
		out = append(out, action{OperationID: rt.Operation, Kind: "endpoint", Method: rt.Method, Path: "/" + APIVersion + rt.Path, ServiceID: rt.Service, Limited: limited([]string{rt.Operation})})
	}
	for _, svc := range s.visibleServices(k) {
		for _, c := range s.capabilitiesOf(k, svc) {
			if hasScopes(k, []string{"services:invoke"}) {
				out = append(out, action{OperationID: c.CapabilityID, Kind: "capability", Method: http.MethodPost, Path: "/" + APIVersion + "/services/" + svc.ID + "/invoke", ServiceID: svc.ID,
					Limited: limited(keys.LimitSelectors("services.invoke", svc.ID, c.OperationID))})
			}
		}
		for _, o := range svc.Operations {
			run := keys.RequestOperation("runs.create", svc.ID, o.ID)
			if o.Durable && hasScopes(k, []string{"runs:write"}) && k.AllowsOperation(run) {
				out = append(out, action{OperationID: run, Kind: "capability", Method: http.MethodPost, Path: "/" + APIVersion + "/runs", ServiceID: svc.ID,
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

func (s *Server) listActions(ctx context.Context, in *ListInput) (*body[Page[action]], error) {
	p, err := pageOf(s.Actions(principal(ctx)), in)
	return &body[Page[action]]{Body: p}, err
}

// --- Invocation ---

type invokeRequest struct {
	OperationID string          `json:"operationId" minLength:"1" maxLength:"100" doc:"An operation of the service, e.g. memory.write"`
	Input       json.RawMessage `json:"input,omitempty" doc:"The operation's input (see the capability's inputSchema)"`
	ApprovalID  string          `json:"approvalId,omitempty" doc:"An approved, unused approval for exactly this service, operation and input (approval-gated operations)"`
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

func (s *Server) invokeService(ctx context.Context, in *invokeInput) (*invokeOutput, error) {
	p := principal(ctx)
	res, err := s.pipeline.Run(ctx, p.caller(ctx), invoke.Call{ServiceID: in.ServiceID, OperationID: in.Body.OperationID, Input: in.Body.Input, ApprovalID: in.Body.ApprovalID})
	if err != nil {
		return nil, err
	}
	charged := float64(res.ChargedMicro) / catalog.MicroPerCredit
	s.publish(ctx, webhooks.EventServiceInvoked, map[string]any{
		"serviceId": res.ServiceID, "operationId": res.OperationID, "chargedCredits": charged, "upstreamRequestId": res.UpstreamRequestID,
	})
	return &invokeOutput{
		Charged: strconv.FormatFloat(charged, 'f', -1, 64), Upstream: res.UpstreamRequestID,
		Body: invokeResult{ServiceID: res.ServiceID, OperationID: res.OperationID, Status: "succeeded", Result: res.Output, ChargedCredits: charged},
	}, nil
}

// caller is the principal as the invoke pipeline sees it.
func (p *Principal) caller(ctx context.Context) invoke.Caller {
	k := p.Key()
	owners := make([]limits.Owner, len(p.Chain))
	for i, c := range p.Chain {
		owners[i] = limits.Owner{ID: c.ID, Limits: c.Limits}
	}
	return invoke.Caller{AccountID: k.AccountID, ProjectID: p.ProjectID, EndUser: p.EndUser, RequestID: requestID(ctx), Chain: owners}
}
