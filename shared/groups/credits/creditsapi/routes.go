package creditsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the credits group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/credits/balance", "credits", "credits.balance.read", "credits:read", routes.NoIdem, routes.BodyNone, "Read the account's credit balance"),
	routes.New(http.MethodGet, "/credits/ledger", "credits", "credits.ledger.list", "credits:read", routes.NoIdem, routes.BodyNone, "List every change of the credit balance, newest first"),
	routes.New(http.MethodPost, "/credits/x402/top-up", "credits", "credits.x402.topUp", "credits:write", routes.Idem, routes.BodyJSON, "Buy credits through x402").WithReplay("Payment-Response", "X-Service-Paid-Agent-Receipt"),
}

// scopeTable are the scopes the credits group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "credits:read", Allows: "Read the account's credit balance."},
	{Name: "credits:write", Allows: "Buy credits for the authenticated account through x402."},
}
