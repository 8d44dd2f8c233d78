package usageapi

import (
	"platformapi/shared/api"
	"platformapi/shared/ports"
)

// Group is the usage group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store}
	return api.Group{Name: "usage", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }}, nil
}
