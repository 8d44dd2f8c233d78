package usageapi

import (
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
)

// New is the usage group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "usage", Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }}
}

// Group is the usage group on the process's table.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store}), nil }
