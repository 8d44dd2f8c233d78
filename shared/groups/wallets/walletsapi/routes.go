package walletsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the wallets group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/wallets", "wallets", "wallets.list", "wallets:read", routes.NoIdem, routes.BodyNone, "List wallets").WithService("managed-wallets"),
	routes.New(http.MethodPost, "/wallets", "wallets", "wallets.create", "wallets:create", routes.Idem, routes.BodyJSON, "Create a managed wallet").WithService("managed-wallets").WithCommit(),
	routes.New(http.MethodGet, "/wallets/{walletId}", "wallets", "wallets.read", "wallets:read", routes.NoIdem, routes.BodyNone, "Read a wallet").WithService("managed-wallets"),
	routes.New(http.MethodGet, "/wallets/{walletId}/balances", "wallets", "wallets.balances.read", "wallets:read", routes.NoIdem, routes.BodyNone, "Read a wallet's balances").WithService("managed-wallets"),
	routes.New(http.MethodPatch, "/wallets/{walletId}/policy", "wallets", "wallets.policy.update", "approvals:write", routes.Idem, routes.BodyJSON, "Administer wallet policy").WithService("managed-wallets").WithCommit(),
	routes.New(http.MethodPost, "/wallets/{walletId}/transactions/quote", "wallets", "wallets.transactions.quote", "wallets:transact", routes.Idem, routes.BodyJSON, "Quote a wallet transaction").WithService("managed-wallets"),
	routes.New(http.MethodPost, "/wallets/{walletId}/transactions", "wallets", "wallets.transactions.create", "wallets:transact", routes.Idem, routes.BodyJSON, "Execute a wallet transaction").WithService("managed-wallets").WithMetered(),
	routes.New(http.MethodGet, "/wallets/{walletId}/transactions", "wallets", "wallets.transactions.list", "wallets:read", routes.NoIdem, routes.BodyNone, "List a wallet's transactions").WithService("managed-wallets"),
	routes.New(http.MethodGet, "/wallets/{walletId}/transactions/{transactionId}", "wallets", "wallets.transactions.read", "wallets:read", routes.NoIdem, routes.BodyNone, "Read a wallet transaction").WithService("managed-wallets"),
	routes.New(http.MethodPost, "/wallets/{walletId}/signatures/quote", "wallets", "wallets.signatures.quote", "wallets:sign", routes.Idem, routes.BodyJSON, "Quote a message signature").WithService("managed-wallets"),
	routes.New(http.MethodPost, "/wallets/{walletId}/signatures", "wallets", "wallets.signatures.create", "wallets:sign", routes.Idem, routes.BodyJSON, "Execute an approved message signature").WithService("managed-wallets"),
}

// scopeTable are the scopes the wallets group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "wallets:read", Allows: "List wallets, read a wallet and balances; list swap tokens, read swaps, build unsigned swaps for the caller's own wallet, follow their fills."},
	{Name: "wallets:create", Allows: "Create a managed wallet."},
	{Name: "wallets:sign", Allows: "Quote and execute approved message signatures."},
	{Name: "wallets:transact", Allows: "Quote and execute wallet sends and swaps, including universal swaps from managed wallets."},
}
