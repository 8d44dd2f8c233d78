package tradingapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the trading group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodPost, "/trading/quotes", "trading", "trading.quotes.create", "trading:execute", routes.Idem, routes.BodyJSON, "Quote a spot trade").WithService("managed-trading"),
	routes.New(http.MethodPost, "/trading/orders", "trading", "trading.orders.create", "trading:execute", routes.Idem, routes.BodyJSON, "Submit a spot trade").WithService("managed-trading").WithMetered(),
	routes.New(http.MethodGet, "/trading/orders", "trading", "trading.orders.list", "trading:read", routes.NoIdem, routes.BodyNone, "List orders").WithService("managed-trading"),
	routes.New(http.MethodGet, "/trading/orders/{orderId}", "trading", "trading.orders.read", "trading:read", routes.NoIdem, routes.BodyNone, "Read an order").WithService("managed-trading"),
	routes.New(http.MethodGet, "/trading/positions", "trading", "trading.positions.list", "trading:read", routes.NoIdem, routes.BodyNone, "List positions").WithService("managed-trading"),
}

// scopeTable are the scopes the trading group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "trading:read", Allows: "Read managed trading positions."},
	{Name: "trading:execute", Allows: "Quote and submit managed spot trades."},
}
