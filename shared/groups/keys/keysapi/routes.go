package keysapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the keys group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/api-keys", "keys", "apiKeys.list", "api_keys:manage", routes.NoIdem, routes.BodyNone, "List the calling key and its descendants"),
	routes.New(http.MethodPost, "/api-keys", "keys", "apiKeys.create", "api_keys:manage", routes.Idem, routes.BodyJSON, "Create a child key, or the first key with a credit token").WithSecret().WithCommit().WithCreditToken(),
	routes.New(http.MethodDelete, "/api-keys/{id}", "keys", "apiKeys.revoke", "api_keys:manage", routes.Idem, routes.BodyNone, "Revoke a key and, with it, its descendants"),
	routes.New(http.MethodPost, "/api-keys/{id}/roll", "keys", "apiKeys.roll", "api_keys:manage", routes.Idem, routes.BodyJSON, "Replace a key by a new one with the same policy; the old one works until the chosen expiry").WithSecret().WithCommit(),
}

// scopeTable are the scopes the keys group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "api_keys:manage", Allows: "Create narrower child keys; list or revoke the current key and its descendants."},
}
