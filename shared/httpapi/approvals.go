package httpapi

import (
	"context"
	"encoding/json"

	"platformapi/shared/apierr"
	"platformapi/shared/approvals"
	"platformapi/shared/catalog"
	"platformapi/shared/webhooks"
)

type approvalRequest struct {
	ServiceID   string          `json:"serviceId" minLength:"1" doc:"The managed service"`
	OperationID string          `json:"operationId" minLength:"1" doc:"An approval-gated operation of it, e.g. memory.delete"`
	Input       json.RawMessage `json:"input,omitempty" doc:"The exact input to approve; the invoke must send the same (compared in canonical form)"`
}

func (s *Server) createApproval(ctx context.Context, in *body[approvalRequest]) (*body[*approvals.Approval], error) {
	p := principal(ctx)
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
	a, err := s.approvals.Create(ctx, p.Key().AccountID, project, p.Key().ID, svc.ID, op.ID, in.Body.Input)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventApprovalRequested, a)
	return &body[*approvals.Approval]{Body: a}, nil
}

type listApprovalsInput struct {
	Status string `query:"status" enum:"pending,approved,rejected,consumed,expired" doc:"Only approvals in this status"`
	ListInput
}

func (s *Server) listApprovals(ctx context.Context, in *listApprovalsInput) (*body[Page[*approvals.Approval]], error) {
	p := principal(ctx)
	list, next, err := s.approvals.List(ctx, p.Key().AccountID, p.ProjectID, in.Status, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return &body[Page[*approvals.Approval]]{Body: page(list, next)}, nil
}

type decision struct {
	Decision string  `json:"decision" enum:"approve,reject"`
	Reason   *string `json:"reason,omitempty" maxLength:"1000"`
}

type decideInput struct {
	ApprovalID string `path:"approvalId" doc:"Approval id (apr_…)"`
	Body       decision
}

func (s *Server) decideApproval(ctx context.Context, in *decideInput) (*body[*approvals.Approval], error) {
	p := principal(ctx)
	a, err := s.approvals.Decide(ctx, p.Key().AccountID, p.ProjectID, in.ApprovalID, in.Body.Decision, in.Body.Reason, p.Key().ID)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, webhooks.EventApprovalDecided, a)
	return &body[*approvals.Approval]{Body: a}, nil
}
