package mcpapi

import (
	"platformapi/shared/api"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/ports"
)

// Group is the MCP group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := servicesapi.PortsDeps(p)
	return api.Group{Name: "mcp", Register: func(k *api.Kernel) error { return Register(k, d) }}, nil
}
