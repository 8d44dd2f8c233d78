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
