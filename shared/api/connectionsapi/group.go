package connectionsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
)

// Group is the connections group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store, Sealer: p.Sealer}
	return api.Group{Name: "connections", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}, nil
}

// Deploy is the connections group's function.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "connections", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}
