package creditsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/credits"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/topup"
)

// Group is the credits group on p: top-ups configured by X402_* (see
// topup.FromEnv), and the sweep of orphaned holds.
func Group(p ports.Ports) (api.Group, error) {
	cfg, fac, err := topup.FromEnv(p.Env, p.Backend == "embedded", p.Store, p.Now)
	if err != nil {
		return api.Group{}, err
	}
	w, err := credits.Work(p)
	if err != nil {
		return api.Group{}, err
	}
	d := Deps{Store: p.Store, TopUp: cfg, Facilitator: fac}
	return api.Group{Name: "credits", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: w, Deploy: Deploy,
		Services: services, Events: events}, nil
}

// Deploy is the credits group's function and its hold sweeper.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "credits", MemoryMiB: 256, Timeout: 29 * time.Second, Uses: deploy.HTTP.With(deploy.UseX402)},
	credits.SweeperFunction,
}}
