package swapsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the swaps group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/swaps/tokens", "swaps", "swaps.tokens.list", "wallets:read", routes.NoIdem, routes.BodyNone, "List swap tokens").WithService("universal-swaps"),
	routes.New(http.MethodPost, "/swaps/quote", "swaps", "swaps.quote", "wallets:transact", routes.Idem, routes.BodyJSON, "Quote a swap").WithService("universal-swaps"),
	routes.New(http.MethodPost, "/swaps", "swaps", "swaps.execute", "wallets:transact", routes.Idem, routes.BodyJSON, "Execute a swap").WithService("universal-swaps").WithMetered(),
	routes.New(http.MethodGet, "/swaps", "swaps", "swaps.list", "wallets:read", routes.NoIdem, routes.BodyNone, "List swaps").WithService("universal-swaps"),
	routes.New(http.MethodGet, "/swaps/{swapId}", "swaps", "swaps.read", "wallets:read", routes.NoIdem, routes.BodyNone, "Read a swap").WithService("universal-swaps"),
	routes.New(http.MethodPost, "/swaps/prepare", "swaps", "swaps.prepare", "wallets:read", routes.NoIdem, routes.BodyJSON, "Build an unsigned swap for the caller's own wallet").WithService("universal-swaps"),
	routes.New(http.MethodGet, "/swaps/routes/{routeId}", "swaps", "swaps.routes.read", "wallets:read", routes.NoIdem, routes.BodyNone, "Follow a swap route's fills").WithService("universal-swaps"),
}
