package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/credits"
	"platformapi/shared/keys"
	"platformapi/shared/limits"
	"platformapi/shared/routes"
	"platformapi/shared/upstream"
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
func pageOf[T any](all []T, in *listInput) (Page[T], error) {
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

func (s *Server) listServices(ctx context.Context, in *listInput) (*body[Page[serviceView]], error) {
	var out []serviceView
	for _, svc := range s.visibleServices(principal(ctx).Key()) {
		out = append(out, serviceView{ServiceID: svc.ID, Name: svc.Name, Description: svc.Description, Available: s.available(svc)})
	}
	p, err := pageOf(out, in)
	return &body[Page[serviceView]]{Body: p}, err
}

func (s *Server) listCapabilities(ctx context.Context, in *listInput) (*body[Page[capability]], error) {
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
	listInput
}

func (s *Server) listServiceCapabilities(ctx context.Context, in *serviceCapabilitiesInput) (*body[Page[capability]], error) {
	svc, _ := catalog.Lookup(in.ServiceID) // existence and access were checked by the route policy
	p, err := pageOf(s.capabilitiesOf(principal(ctx).Key(), svc), &in.listInput)
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
		if !hasScopes(k, rt.Scopes) || rt.Service != "" && !k.AllowsService(rt.Service) || !k.AllowsOperation(rt.Operation) && rt.Operation != "services.invoke" {
			continue
		}
		if rt.Operation == "services.invoke" {
			continue // listed per capability below
		}
		out = append(out, action{OperationID: rt.Operation, Kind: "endpoint", Method: rt.Method, Path: "/" + APIVersion + rt.Path, ServiceID: rt.Service, Limited: limited([]string{rt.Operation})})
	}
	if hasScopes(k, []string{"services:invoke"}) {
		for _, svc := range s.visibleServices(k) {
			for _, c := range s.capabilitiesOf(k, svc) {
				out = append(out, action{OperationID: c.CapabilityID, Kind: "capability", Method: http.MethodPost, Path: "/" + APIVersion + "/services/" + svc.ID + "/invoke", ServiceID: svc.ID,
					Limited: limited(keys.LimitSelectors("services.invoke", svc.ID, c.OperationID))})
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

func (s *Server) listActions(ctx context.Context, in *listInput) (*body[Page[action]], error) {
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
	res, err := s.invoke(ctx, principal(ctx), in.ServiceID, in.Body)
	if err != nil {
		return nil, err
	}
	return &invokeOutput{Charged: strconv.FormatFloat(res.ChargedCredits, 'f', -1, 64), Body: *res.invokeResult, Upstream: res.upstreamID}, nil
}

type invoked struct {
	*invokeResult
	upstreamID string
}

// invoke is the one pipeline every managed-operation call runs through, from
// HTTP or from MCP: approval, creditsPerDay reservation, credit hold, the
// call, then capture of the exact charge, or release of everything.
func (s *Server) invoke(ctx context.Context, p *Principal, serviceID string, req invokeRequest) (*invoked, error) {
	svc, ok := catalog.Lookup(serviceID)
	if !ok {
		return nil, apierr.New(apierr.NotFound, "No managed service %q.", serviceID)
	}
	op, ok := svc.Op(req.OperationID)
	if !ok || !op.Invocable {
		return nil, apierr.Invalid("Unknown operation.", apierr.Field("body.operationId", "%s has no invocable operation %q", serviceID, req.OperationID))
	}
	if len(req.Input) == 0 {
		req.Input = json.RawMessage("{}")
	}
	if op.Approval {
		if req.ApprovalID == "" {
			return nil, apierr.New(apierr.ApprovalRequired, "%s.%s requires an approval: create one with POST /v1/approvals/service-actions, have it approved, and send its approvalId.", serviceID, op.ID)
		}
		undo, err := s.approvals.Consume(ctx, p.Key().AccountID, p.ProjectID, req.ApprovalID, serviceID, op.ID, req.Input)
		if err != nil {
			return nil, err
		}
		res, err := s.charge(ctx, p, svc, op, req)
		if err != nil {
			_ = undo(context.WithoutCancel(ctx)) // the operation did not happen: the approval stays usable
		}
		return res, err
	}
	return s.charge(ctx, p, svc, op, req)
}

func (s *Server) charge(ctx context.Context, p *Principal, svc catalog.Service, op catalog.Operation, req invokeRequest) (*invoked, error) {
	k := p.Key()
	detached := context.WithoutCancel(ctx)
	owners := make([]limits.Owner, len(p.Chain))
	for i, c := range p.Chain {
		owners[i] = limits.Owner{ID: c.ID, Limits: c.Limits}
	}
	reservation, err := s.limits.ReserveCredits(ctx, owners, keys.LimitSelectors("services.invoke", svc.ID, op.ID), op.PriceMicro)
	if err != nil {
		return nil, limitError(err)
	}
	hold, err := s.ledger.Hold(ctx, k.AccountID, op.PriceMicro, "services.invoke."+svc.ID+"."+op.ID)
	if err != nil {
		_ = reservation.Release(detached)
		if errors.Is(err, credits.ErrInsufficient) {
			return nil, apierr.New(apierr.InsufficientCredits, "The balance cannot cover %s (up to %s credits). Top up with POST /v1/credits/x402/top-up.", op.ID, strconv.FormatFloat(float64(op.PriceMicro)/catalog.MicroPerCredit, 'f', -1, 64))
		}
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, s.deps.RequestTimeout-2*time.Second)
	defer cancel()
	res, err := s.deps.Services.Invoke(callCtx, upstream.Request{
		ServiceID: svc.ID, OperationID: op.ID, Input: req.Input, AccountID: k.AccountID, ProjectID: p.ProjectID,
		EndUser: p.EndUser, RequestID: requestID(ctx), MaxChargeMicro: op.PriceMicro,
	})
	if err != nil {
		_ = hold.Release(detached)
		_ = reservation.Release(detached)
		return nil, upstreamError(err)
	}
	if err := hold.Capture(detached, res.ChargedMicro); err != nil {
		return nil, err
	}
	_ = reservation.Settle(detached, res.ChargedMicro)
	return &invoked{
		invokeResult: &invokeResult{ServiceID: svc.ID, OperationID: op.ID, Status: "succeeded", Result: res.Output, ChargedCredits: float64(res.ChargedMicro) / catalog.MicroPerCredit},
		upstreamID:   res.UpstreamRequestID,
	}, nil
}

func limitError(err error) error {
	var ex *limits.ExceededError
	if errors.As(err, &ex) {
		return apierr.New(apierr.LimitExceeded, "The %s limit of selector %s is exhausted.", ex.Kind, ex.Selector).
			WithHeader("X-Service-Limit-Operation", ex.Selector).
			WithHeader("Retry-After", strconv.Itoa(ex.RetryAfterSeconds))
	}
	return err
}

// upstreamError maps the upstream port's failures to the catalogue; the
// service's own wait is passed on in Retry-After.
func upstreamError(err error) error {
	var rl *upstream.RateLimitedError
	var un *upstream.UnavailableError
	switch {
	case errors.As(err, &rl):
		return apierr.New(apierr.UpstreamRateLimited, "The managed service asked to slow down; nothing was charged.").WithHeader("Retry-After", retrySeconds(rl.RetryAfter))
	case errors.As(err, &un):
		e := apierr.New(apierr.ServiceUnavailable, "The managed service is unavailable; nothing was charged.").WithHeader("Retry-After", retrySeconds(un.RetryAfter))
		e.Cause = err
		return e
	case errors.Is(err, upstream.ErrNotConfigured):
		return apierr.New(apierr.ServiceUnavailable, "This managed service is not configured on this deployment.").WithHeader("Retry-After", "3600")
	case errors.Is(err, upstream.ErrBadUpstream):
		e := apierr.New(apierr.ServiceUnavailable, "The managed service answered incorrectly; nothing was charged.").WithHeader("Retry-After", "5")
		e.Cause = err
		return e
	}
	return err
}

func retrySeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}
