package creditsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/topup"
)

// New is the credits group's operations on d; its work is credits.Work's.
func New(d Deps) api.Group {
	return api.Group{Name: "credits", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Services: services, Events: events}
}

// FromEnv are the group's Deps on st: top-ups configured by X402_* read
// by getenv (see topup.FromEnv; the local facilitator by default where
// embedded), on the clock now (nil is time.Now).
func FromEnv(getenv func(string) string, embedded bool, st store.Store, now func() time.Time) (Deps, error) {
	cfg, fac, err := topup.FromEnv(getenv, embedded, st, now)
	return Deps{Store: st, TopUp: cfg, Facilitator: fac}, err
}

// Group is the credits group on p, with the sweep of orphaned holds.
func Group(p ports.Ports) (api.Group, error) {
	d, err := FromEnv(p.Env, p.Backend == "embedded", p.Store, p.Now)
	if err != nil {
		return api.Group{}, err
	}
	g := New(d)
	g.Work, err = credits.Work(credits.WorkDeps{Store: p.Store, Now: p.Now, Logger: p.Logger, Getenv: p.Getenv})
	return g, err
}

// Deploy is the credits group's function and its hold sweeper.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "credits", MemoryMiB: 256, Timeout: 29 * time.Second, Uses: deploy.HTTP.With(deploy.UseX402)},
	credits.SweeperFunction,
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Credits", Description: "The prepaid credit balance, its ledger, and buying credits through x402."}, Files: []string{"credits"}},
}
