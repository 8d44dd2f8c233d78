package exampleapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the group's routes.
var routeTable = []routes.Route{
	routes.New(http.MethodPost, "/examples", "examples", "examples.create", "examples:write", routes.Idem, routes.BodyNone, "Queue an example"),
}

// scopeTable are the group's own scopes: a key calls its route only when it
// holds examples:write, and a first key holds it with every other scope.
var scopeTable = []routes.Scope{
	{Name: "examples:write", Allows: "Queue examples."},
}
