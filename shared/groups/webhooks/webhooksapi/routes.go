package webhooksapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the webhooks group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/webhooks", "webhooks", "webhooks.list", "webhooks:read", routes.NoIdem, routes.BodyNone, "List webhooks"),
	routes.New(http.MethodPost, "/webhooks", "webhooks", "webhooks.create", "webhooks:write", routes.Idem, routes.BodyJSON, "Create a webhook").WithSecret().WithCommit(),
	routes.New(http.MethodPatch, "/webhooks/{webhookId}", "webhooks", "webhooks.update", "webhooks:write", routes.Idem, routes.BodyJSON, "Update a webhook"),
	routes.New(http.MethodPost, "/webhooks/{webhookId}/rotate-secret", "webhooks", "webhooks.rotate", "webhooks:write", routes.Idem, routes.BodyNone, "Rotate a webhook's signing secret").WithSecret(),
	routes.New(http.MethodDelete, "/webhooks/{webhookId}", "webhooks", "webhooks.disable", "webhooks:write", routes.Idem, routes.BodyNone, "Disable a webhook"),
	routes.New(http.MethodGet, "/webhook-deliveries", "webhooks", "webhookDeliveries.list", "webhooks:read", routes.NoIdem, routes.BodyNone, "List webhook deliveries"),
	routes.New(http.MethodPost, "/webhook-deliveries/{deliveryId}/replay", "webhooks", "webhookDeliveries.replay", "webhooks:write", routes.Idem, routes.BodyNone, "Replay a webhook delivery"),
}

// scopeTable are the scopes the webhooks group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "webhooks:read", Allows: "List webhooks manageable by the key."},
	{Name: "webhooks:write", Allows: "Create and disable webhooks."},
}
