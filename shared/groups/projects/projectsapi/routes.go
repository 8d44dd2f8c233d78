package projectsapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the projects group's routes.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	routes.New(http.MethodGet, "/projects", "projects", "projects.list", "projects:read", routes.NoIdem, routes.BodyNone, "List projects visible to the key").WithArchivedReadable(),
	routes.New(http.MethodPost, "/projects", "projects", "projects.create", "projects:write", routes.Idem, routes.BodyJSON, "Create a project").WithCommit(),
	routes.New(http.MethodGet, "/projects/{projectId}", "projects", "projects.read", "projects:read", routes.NoIdem, routes.BodyNone, "Read a project").WithArchivedReadable(),
	routes.New(http.MethodPatch, "/projects/{projectId}", "projects", "projects.update", "projects:write", routes.Idem, routes.BodyJSON, "Update a project").WithCommit(),
	routes.New(http.MethodDelete, "/projects/{projectId}", "projects", "projects.archive", "projects:write", routes.Idem, routes.BodyNone, "Archive a project").WithCommit(),
}

// scopeTable are the scopes the projects group's routes need, with what each
// allows; the catalogue generator gathers every group's into the one scope
// set keys are checked against (docs/structure.md).
var scopeTable = []routes.Scope{
	{Name: "projects:read", Allows: "List and read projects visible to the key."},
	{Name: "projects:write", Allows: "Create, update, archive projects."},
}
