package walletsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/groups/wallets"
)

// New is the managed-wallets group on s, with its worker and recheck.
func New(s walletsenv.Services) api.Group {
	return api.Group{Name: "wallets", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, s) }, Work: s.Work(), Deploy: Deploy,
		Services: services, Events: events}
}

// On is the managed-wallets group on the process's services of managed
// wallets and swaps (the swaps group's On takes the same).
func On(sh *walletsenv.Shared) api.NewGroup {
	return func(p ports.Ports) (api.Group, error) { return New(sh.On(p)), nil }
}

// Group is the managed-wallets group of a process without chains: every
// route answers 503.
func Group(p ports.Ports) (api.Group, error) { return On(walletsenv.NewShared(nil))(p) }

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

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Wallets", Description: "Managed wallets: balances, policy, quoted and approved transactions and message signatures."}, Files: []string{"wallets"}},
}
