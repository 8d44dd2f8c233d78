package runsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the runs group's routes; the artifacts function serves the
// artifacts' routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/runs", "runs", "runs.list", "runs:read", routes.NoIdem, routes.BodyNone, "List durable runs"),
	routes.New(http.MethodPost, "/runs", "runs", "runs.create", "runs:write", routes.Idem, routes.BodyJSON, "Start a durable run").WithServiceFrom("body:serviceId").WithOperationFrom("body:operationId").WithMetered(),
	routes.New(http.MethodGet, "/runs/{runId}", "runs", "runs.read", "runs:read", routes.NoIdem, routes.BodyNone, "Read a durable run"),
	routes.New(http.MethodPost, "/runs/{runId}/cancel", "runs", "runs.cancel", "runs:write", routes.Idem, routes.BodyNone, "Cancel a durable run"),
	routes.New(http.MethodGet, "/artifacts", "artifacts", "artifacts.list", "artifacts:read", routes.NoIdem, routes.BodyNone, "List run artifacts"),
	routes.New(http.MethodGet, "/artifacts/{artifactId}/content", "artifacts", "artifacts.content.read", "artifacts:read", routes.NoIdem, routes.BodyNone, "Download an artifact"),
}

// scopeTable are the scopes the runs group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "runs:read", Allows: "List and read durable service runs."},
	{Name: "runs:write", Allows: "Create and cancel durable service runs."},
	{Name: "artifacts:read", Allows: "List and download authenticated run artifacts."},
}
