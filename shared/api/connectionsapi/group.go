package connectionsapi

import (
	"platformapi/shared/api"
	"platformapi/shared/ports"
)

// Group is the connections group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store, Sealer: p.Sealer}
	return api.Group{Name: "connections", Register: func(k *api.Kernel) error { return Register(k, d) }}, nil
}
