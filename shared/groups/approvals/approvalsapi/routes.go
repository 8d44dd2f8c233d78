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
