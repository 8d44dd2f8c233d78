package publicapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the public group's routes: they need no key, and are served at
// the root and under /v1.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	{Method: http.MethodGet, Path: "/", Group: "public", Operation: "index.read", ID: "index.read", Summary: "Where to start: links to the reference, the OpenAPI document and health"},
	{Method: http.MethodGet, Path: "/health", Group: "public", Operation: "health.read", ID: "health.read", Summary: "Service and API-version health"},
	{Method: http.MethodGet, Path: "/openapi.json", Group: "public", Operation: "openapi.read", ID: "openapi.read", Summary: "This OpenAPI 3.1 document"},
	{Method: http.MethodGet, Path: "/pricing", Group: "public", Operation: "pricing.read", ID: "pricing.read", Summary: "Server-owned price and availability catalogue"},
	{Method: http.MethodGet, Path: "/docs", Group: "public", Operation: "docs.read", ID: "docs.read", Summary: "Browsable API reference"},
	{Method: http.MethodGet, Path: "/docs/assets/{name}", Group: "public", Operation: "docs.read", ID: "docs.assets.read", Summary: "The reference page's script (Redoc, served from here: no CDN)"},
}
