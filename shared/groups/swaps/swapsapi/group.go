package swapsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
	"platformapi/shared/groups/swaps/walletsenv"
)

// New is the swaps group on s; its transactions are the wallets group's
// work.
func New(s walletsenv.Services) api.Group {
	return api.Group{Name: "swaps", Sections: sections, Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, s) }, Deploy: Deploy,
		Services: services, Events: events}
}

// On is the swaps group on the process's services of managed wallets and
// swaps (the wallets group's On takes the same).
func On(sh *walletsenv.Shared) api.NewGroup {
	return func(p ports.Ports) (api.Group, error) { return New(sh.On(p)), nil }
}

// Group is the swaps group of a process without chains: every route that
// needs one answers 503.
func Group(p ports.Ports) (api.Group, error) { return On(walletsenv.NewShared(nil))(p) }

// Deploy is the swaps group's function: it executes swaps as wallet
// transactions (walletsenv.Uses); quotes come from the router.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "swaps", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletsenv.Uses},
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Swaps", Description: "Universal swaps across chains: tokens, quotes, execution, unsigned swaps for the caller's own wallet, and route tracking."}, Files: []string{"swaps"}},
}
