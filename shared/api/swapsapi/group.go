package swapsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/swaps/walletsenv"
)

// Group is the swaps group on p (see walletsenv.FromPorts); its
// transactions are the wallets group's work.
func Group(p ports.Ports) (api.Group, error) {
	wc, sc := walletsenv.FromPorts(p)
	d := Deps{Wallets: wc, Swaps: sc}
	return api.Group{Name: "swaps", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Services: services, Events: events}, nil
}

// Deploy is the swaps group's function: it executes swaps as wallet
// transactions (walletsenv.Uses); quotes come from the router.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "swaps", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletsenv.Uses},
}}
