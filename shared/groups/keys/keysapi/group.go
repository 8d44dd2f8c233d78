package keysapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the keys group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "keys", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the keys group on the process's table.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store}), nil }

// Deploy is the keys group's function: it seals the secrets it answers for
// replay, and signs credit tokens.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "keys", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.UseCreditSecret)},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "API keys", Description: "Keys and their descendants: scopes, service and operation access, limits, allowed addresses, expiry and rolling. A key's secret is shown once."}, Files: []string{"keys"}},
}
