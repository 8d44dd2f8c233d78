package exampleapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable are the group's routes.
var routeTable = []routes.Route{
	routes.New(http.MethodPost, "/examples", "examples", "examples.create", "runs:write", routes.Idem, routes.BodyNone, "Queue an example"),
}
