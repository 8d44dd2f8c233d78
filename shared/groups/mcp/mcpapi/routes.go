package mcpapi

import (
	"net/http"

	"platformapi/shared/base/routes"
)

// routeTable is the remote MCP transport (docs/mcp.md): POST, Streamable HTTP,
// the same bearer key, which must hold services:read and actions.list. It is
// served at the root and under /v1; each tool call then runs the managed
// operation's own policy.
// Each row is the route's whole policy (package routes); the catalogue
// generator gathers every group's rows into the one table the kernel, keys,
// audit and webhooks read (docs/structure.md).
var routeTable = []routes.Route{
	{Method: http.MethodPost, Path: "/mcp", Group: "mcp", Operation: "actions.list", ID: "mcp", Scopes: []string{"services:read"}, Body: routes.BodyJSON,
		Summary: "Remote MCP server (Streamable HTTP, stateless, JSON responses)"},
}
