package usageapi

import (
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the usage group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "usage", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }}
}

// Group is the usage group on the process's table.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store}), nil }

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Usage", Description: "Request counts and charged credits per project, operation and time bucket."}, Files: []string{"usage.read"}},
	{Tag: api.Tag{Name: "Audit events", Description: "One event per authenticated request: who called what, from where, and how it ended."}, Files: []string{"auditEvents.list"}},
}
