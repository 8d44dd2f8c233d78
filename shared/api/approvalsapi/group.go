package approvalsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
)

// Group is the approvals group on p.
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store}
	return api.Group{Name: "approvals", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}, nil
}

// Deploy is the approvals group's function.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "approvals", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}
