// Package approvalsapi is the approvals endpoint group: request
// approval of a gated service action, list, decide. Its writes commit with
// their stored idempotent response; the invoke consumes an approval once.
package approvalsapi

import (
	"context"
	"encoding/json"
	"net/http"

	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/approvals"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
}

type handlers struct {
	k         *api.Kernel
	approvals *approvals.Repo
}

// Register adds the group's operations to the kernel.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, approvals: approvals.NewRepo(idempotency.Deferring(d.Store), k.Now)}
	api.Register(k, "approvals.list", http.StatusOK, h.list)
	api.Register(k, "approvals.create", http.StatusCreated, h.create)
	api.Register(k, "approvals.decide", http.StatusOK, h.decide)
	return nil
}

type approvalRequest struct {
	ServiceID   string          `json:"serviceId" minLength:"1" doc:"The managed service"`
	OperationID string          `json:"operationId" minLength:"1" doc:"An approval-gated operation of it, e.g. memory.delete"`
	Input       json.RawMessage `json:"input,omitempty" doc:"The exact input to approve; the invoke must send the same (compared in canonical form)"`
}

func (h *handlers) create(ctx context.Context, in *api.Body[approvalRequest]) (*api.Body[*approvals.Approval], error) {
	p := api.PrincipalFrom(ctx)
	svc, ok := catalog.Lookup(in.Body.ServiceID)
	if !ok {
		return nil, apierr.Invalid("Unknown service.", apierr.Field("body.serviceId", "no managed service %q", in.Body.ServiceID))
	}
	op, ok := svc.Op(in.Body.OperationID)
	if !ok || !op.Invocable {
		return nil, apierr.Invalid("Unknown operation.", apierr.Field("body.operationId", "%s has no invocable operation %q", svc.ID, in.Body.OperationID))
	}
	if !op.Approval {
		return nil, apierr.Invalid("This operation needs no approval.", apierr.Field("body.operationId", "%s.%s is not approval-gated", svc.ID, op.ID))
	}
	var project *string
	if p.ProjectID != "" {
		project = &p.ProjectID
	}
	a, err := h.approvals.Create(ctx, p.Key().AccountID, project, p.Key().ID, svc.ID, op.ID, in.Body.Input)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventApprovalRequested, a)
	return api.Reply(a), nil
}

type listApprovalsInput struct {
	Status string `query:"status" enum:"pending,approved,rejected,consumed,expired" doc:"Only approvals in this status"`
	api.ListInput
}

func (h *handlers) list(ctx context.Context, in *listApprovalsInput) (*api.Body[api.Page[*approvals.Approval]], error) {
	p := api.PrincipalFrom(ctx)
	list, next, err := h.approvals.List(ctx, p.Key().AccountID, p.ProjectID, in.Status, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type decision struct {
	Decision string  `json:"decision" enum:"approve,reject"`
	Reason   *string `json:"reason,omitempty" maxLength:"1000"`
}

type decideInput struct {
	ApprovalID string `path:"approvalId" doc:"Approval id (apr_…)"`
	Body       decision
}

func (h *handlers) decide(ctx context.Context, in *decideInput) (*api.Body[*approvals.Approval], error) {
	p := api.PrincipalFrom(ctx)
	a, err := h.approvals.Decide(ctx, p.Key().AccountID, p.ProjectID, in.ApprovalID, in.Body.Decision, in.Body.Reason, p.Key())
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventApprovalDecided, a)
	return api.Reply(a), nil
}
