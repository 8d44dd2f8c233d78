package servicesapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
)

// PortsDeps are the group's dependencies on p: the managed services p
// reaches, the built-in schemas, and the browser origins
// MCP_ALLOWED_ORIGINS allows.
func PortsDeps(p ports.Ports) Deps {
	return Deps{Store: p.Store, Services: p.Services, Schemas: BuiltinSchemas(),
		MCPAllowedOrigins: ParseOrigins(p.Env("MCP_ALLOWED_ORIGINS")), Sealer: p.Sealer}
}

// Group is the services group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := PortsDeps(p)
	return api.Group{Name: "services", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Services: services, Events: events}, nil
}

// Deploy is the services group's function: it opens the connections a
// call names.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "services", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},
}}
