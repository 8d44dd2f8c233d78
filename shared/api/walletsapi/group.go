package walletsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/swaps/walletsenv"
	"platformapi/shared/wallets"
	"platformapi/shared/work"
)

// Group is the managed-wallets group on p (see walletsenv.FromPorts), with
// its worker and recheck.
func Group(p ports.Ports) (api.Group, error) {
	wc, sc := walletsenv.FromPorts(p)
	d := Deps{Wallets: wc, Swaps: sc}
	return api.Group{Name: "wallets", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: walletsenv.Work(p), Deploy: Deploy,
		Services: services, Events: events}, nil
}

// Deploy is what the managed-wallets group deploys: the wallets queue, its
// function (it seals new keys and opens them to sign), its worker and its
// recheck.
var Deploy = deploy.Unit{
	Queues: []work.Queue{wallets.Queue},
	Functions: []deploy.Function{
		{Name: "wallets", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletsenv.Uses},
		walletsenv.WorkerFunction,
		walletsenv.RecheckFunction,
	},
}
