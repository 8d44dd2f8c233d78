package approvalsapi

import "platformapi/shared/groups/webhooks/eventdef"

// Event names the group publishes, each after its operation committed.
const (
	eventApprovalRequested = "approval.requested"
	eventApprovalDecided   = "approval.decided"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventApprovalRequested, EmittedBy: "approvals.create", ReadBy: "approvals.list", Subject: eventdef.SubjectNone,
		Description: "A service action awaits approval (data: the approval)."},
	{Name: eventApprovalDecided, EmittedBy: "approvals.decide", ReadBy: "approvals.list", Subject: eventdef.SubjectNone,
		Description: "An approval was approved or rejected (data: the approval)."},
}
