package projectsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
)

// Group is the projects group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store}
	return api.Group{Name: "projects", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}, nil
}

// Deploy is the projects group's function (it also answers /usage).
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "projects", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}
