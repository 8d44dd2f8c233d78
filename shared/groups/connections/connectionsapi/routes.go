package connectionsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the connections group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/connections", "connections", "connections.list", "connections:read", routes.NoIdem, routes.BodyNone, "List protected connections"),
	routes.New(http.MethodPost, "/connections", "connections", "connections.create", "connections:write", routes.Idem, routes.BodyJSON, "Create a protected connection").WithCommit(),
	routes.New(http.MethodGet, "/connections/{connectionId}", "connections", "connections.read", "connections:read", routes.NoIdem, routes.BodyNone, "Read a protected connection's metadata"),
	routes.New(http.MethodPatch, "/connections/{connectionId}", "connections", "connections.update", "connections:write", routes.Idem, routes.BodyJSON, "Rotate or disable a protected connection").WithCommit(),
	routes.New(http.MethodDelete, "/connections/{connectionId}", "connections", "connections.delete", "connections:write", routes.Idem, routes.BodyNone, "Delete a protected connection").WithCommit(),
}

// scopeTable are the scopes the connections group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "connections:read", Allows: "Read protected connection metadata."},
	{Name: "connections:write", Allows: "Create, rotate, disable, delete protected connections."},
}
