package usageapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the usage group's routes; the projects function serves them.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/usage", "projects", "usage.read", "usage:read", routes.NoIdem, routes.BodyNone, "Project request and charged-credit summaries"),
	routes.New(http.MethodGet, "/audit-events", "projects", "auditEvents.list", "audit:read", routes.NoIdem, routes.BodyNone, "Project request audit events"),
}

// scopeTable are the scopes the usage group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "usage:read", Allows: "Read project request and charged-credit summaries."},
	{Name: "audit:read", Allows: "Read project request audit events."},
}
