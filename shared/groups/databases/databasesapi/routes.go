package databasesapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the databases group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/databases/account", "databases", "databases.account.read", "databases:read", routes.NoIdem, routes.BodyNone, "Read the managed database").WithService("core-database"),
	routes.New(http.MethodPost, "/databases/account", "databases", "databases.account.provision", "databases:write", routes.Idem, routes.BodyJSON, "Provision the managed database").WithService("core-database"),
	routes.New(http.MethodDelete, "/databases/account", "databases", "databases.account.deprovision", "databases:write", routes.Idem, routes.BodyNone, "Deprovision the managed database").WithService("core-database"),
	routes.New(http.MethodPost, "/databases/query", "databases", "databases.query", "databases:read", routes.NoIdem, routes.BodyJSON, "Run a read query").WithService("core-database"),
	routes.New(http.MethodPost, "/databases/actions", "databases", "databases.actions", "databases:write", routes.Idem, routes.BodyJSON, "Change database structure or records").WithService("core-database"),
	routes.New(http.MethodPost, "/databases/transfers", "databases", "databases.transfers.create", "databases:write", routes.Idem, routes.BodyJSON, "Start a portable-copy transfer").WithService("core-database"),
	routes.New(http.MethodPut, "/databases/transfers/{transferId}/parts/{partNumber}", "databases", "databases.transfers.part.upload", "databases:write", routes.Idem, routes.BodyZip, "Upload one archive part").WithService("core-database"),
	routes.New(http.MethodPost, "/databases/transfers/{transferId}/complete", "databases", "databases.transfers.complete", "databases:write", routes.Idem, routes.BodyJSON, "Complete a transfer").WithService("core-database"),
	routes.New(http.MethodGet, "/databases/transfers/{transferId}/archive", "databases", "databases.transfers.archive", "databases:read", routes.NoIdem, routes.BodyNone, "Download a transfer's archive").WithService("core-database"),
	routes.New(http.MethodGet, "/databases/transfers/{transferId}", "databases", "databases.transfers.read", "databases:read", routes.NoIdem, routes.BodyNone, "Read a transfer").WithService("core-database"),
	routes.New(http.MethodDelete, "/databases/transfers/{transferId}", "databases", "databases.transfers.cancel", "databases:write", routes.Idem, routes.BodyNone, "Cancel a transfer").WithService("core-database"),
}

// scopeTable are the scopes the databases group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "databases:read", Allows: "Read database status, structure, records, transfers, archives."},
	{Name: "databases:write", Allows: "Provision or change database data; manage portable copies."},
}
