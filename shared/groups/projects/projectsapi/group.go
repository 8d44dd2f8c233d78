package projectsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the projects group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "projects", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the projects group on the process's table.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store}), nil }

// Deploy is the projects group's function (it also answers /usage).
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "projects", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Projects", Description: "Projects scope keys, files, connections, usage and audit events within an account."}, Files: []string{"projects"}},
}
