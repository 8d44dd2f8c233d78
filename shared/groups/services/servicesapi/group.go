package servicesapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/api"
)

// FromEnv are the group's Deps on the table, the managed services and the
// envelope key: the built-in schemas, and the browser origins
// MCP_ALLOWED_ORIGINS (read by getenv, nil is os.Getenv) allows.
func FromEnv(getenv func(string) string, st store.Store, services upstream.Router, sealer envelope.Sealer) Deps {
	return Deps{Store: st, Services: services, Schemas: BuiltinSchemas(),
		MCPAllowedOrigins: ParseOrigins(ports.Env("MCP_ALLOWED_ORIGINS", getenv)), Sealer: sealer}
}

// PortsDeps are the group's Deps on p.
func PortsDeps(p ports.Ports) Deps { return FromEnv(p.Getenv, p.Store, p.Services, p.Sealer) }

// New is the services group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "services", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Services: services, Events: events}
}

// Group is the services group on p.
func Group(p ports.Ports) (api.Group, error) { return New(PortsDeps(p)), nil }

// Deploy is the services group's function: it opens the connections a
// call names.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "services", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Services", Description: "The managed services, their capabilities, everything a key can call, and invoking an operation."}, Files: []string{"services"}},
}
