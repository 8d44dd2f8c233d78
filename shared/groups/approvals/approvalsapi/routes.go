package approvalsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the approvals group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/approvals", "approvals", "approvals.list", "approvals:read", routes.NoIdem, routes.BodyNone, "List approvals"),
	routes.New(http.MethodPost, "/approvals/service-actions", "approvals", "approvals.create", "approvals:write", routes.Idem, routes.BodyJSON, "Request approval for a service action").WithServiceFrom("body:serviceId").WithCommit(),
	routes.New(http.MethodPost, "/approvals/{approvalId}", "approvals", "approvals.decide", "approvals:write", routes.Idem, routes.BodyJSON, "Approve or reject").WithCommit(),
}

// scopeTable are the scopes the approvals group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "approvals:read", Allows: "List approvals visible to the account."},
	{Name: "approvals:write", Allows: "Approve or reject actions; administer wallet policy."},
}
