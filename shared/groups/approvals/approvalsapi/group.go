package approvalsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
)

// New is the approvals group on d.
func New(d Deps) api.Group {
	return api.Group{Name: "approvals", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the approvals group on the process's table.
func Group(p ports.Ports) (api.Group, error) { return New(Deps{Store: p.Store}), nil }

// Deploy is the approvals group's function.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "approvals", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
}}
