package servicesapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the services group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/services", "services", "services.list", "services:read", routes.NoIdem, routes.BodyNone, "List managed services visible to the key"),
	routes.New(http.MethodGet, "/capabilities", "services", "capabilities.list", "services:read", routes.NoIdem, routes.BodyNone, "List capabilities visible to the key"),
	routes.New(http.MethodGet, "/capabilities/{serviceId}", "services", "capabilities.list", "services:read", routes.NoIdem, routes.BodyNone, "List one service's capabilities").WithServiceFrom("path:serviceId").WithID("capabilities.list.byService"),
	routes.New(http.MethodGet, "/actions", "services", "actions.list", "services:read", routes.NoIdem, routes.BodyNone, "Everything this key can call, after all four controls"),
	routes.New(http.MethodPost, "/services/{serviceId}/invoke", "services", "services.invoke", "services:invoke", routes.Idem, routes.BodyJSON, "Invoke a managed service operation").WithServiceFrom("path:serviceId").WithOperationFrom("body:operationId").WithMetered().
		WithReplay("X-Service-Credits-Charged", "X-Service-Upstream-Request-Id"),
}

// scopeTable are the scopes the services group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "services:read", Allows: "List managed services visible to the key."},
	{Name: "services:invoke", Allows: "Invoke an allowed generic managed service."},
}
