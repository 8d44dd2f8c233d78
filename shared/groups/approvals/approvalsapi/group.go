package approvalsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the approvals group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "approvals", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the approvals group on the process's table.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store}), nil }

// Deploy is the approvals group's function.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "approvals", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Approvals", Description: "Human approval of service actions and wallet operations before they run."}, Files: []string{"approvals"}},
}
