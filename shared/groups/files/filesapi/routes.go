package filesapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the files group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/files", "files", "files.list", "files:read", routes.NoIdem, routes.BodyNone, "List project files"),
	routes.New(http.MethodPost, "/files", "files", "files.create", "files:write", routes.Idem, routes.BodyRaw, "Upload a project file").WithCommit().WithReplay("X-Content-Sha256"),
	routes.New(http.MethodGet, "/files/{fileId}", "files", "files.read", "files:read", routes.NoIdem, routes.BodyNone, "Read a file's record"),
	routes.New(http.MethodGet, "/files/{fileId}/content", "files", "files.read", "files:read", routes.NoIdem, routes.BodyNone, "Download a file's bytes").WithID("files.content.read"),
	routes.New(http.MethodDelete, "/files/{fileId}", "files", "files.delete", "files:write", routes.Idem, routes.BodyNone, "Delete a project file").WithCommit(),
}

// scopeTable are the scopes the files group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "files:read", Allows: "List and download project files."},
	{Name: "files:write", Allows: "Upload and delete project files."},
}
