package mcpapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
	"platformapi/shared/groups/services/servicesapi"
)

// New is the MCP group on d (the services group's Deps: it serves the
// same operations as tools).
func New(d servicesapi.Deps) api.Group {
	return api.Group{Name: "mcp", Sections: sections, Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy}
}

// Group is the MCP group on p.
func Group(p ports.Ports) (api.Group, error) { return New(servicesapi.PortsDeps(p)), nil }

// Deploy is the MCP group's function: it opens the connections a tool
// call names.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "mcp", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "MCP", Description: "The remote MCP server: agents list and call the key's callable capabilities as tools over the Streamable HTTP transport, with the same key and the same checks as `POST /services/{serviceId}/invoke`."}, Files: []string{"mcp"}},
}
