package connectionsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the connections group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "connections", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the connections group on the process's table and envelope key.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store, Sealer: p.Sealer}), nil }

// Deploy is the connections group's function.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "connections", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Connections", Description: "Protected connections: third-party credentials stored sealed, used by services and never returned."}, Files: []string{"connections"}},
}
