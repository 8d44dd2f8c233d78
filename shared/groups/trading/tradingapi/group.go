package tradingapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/api"
	"platformapi/shared/groups/trading/tradingenv"
)

// New is the trading group's operations on d; its work is
// tradingenv.Work's.
func New(d Deps) api.Group {
	return api.Group{Name: "trading", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Services: services, Events: events}
}

// FromEnv are the group's Deps on d: the venue its TRADING_*
// configuration names (package tradingenv).
func FromEnv(d tradingenv.Deps) (Deps, error) {
	venue, err := tradingenv.Config(func(name string) string { return ports.Env(name, d.Getenv) })
	if err != nil {
		return Deps{}, err
	}
	venue.Logger = d.Logger
	return Deps{Store: d.Store, Trading: venue, Outbox: d.Outbox}, nil
}

// Group is the trading group on p, with its recheck.
func Group(p ports.Ports) (api.Group, error) {
	td := tradingenv.Deps{Store: p.Store, Logger: p.Logger, Getenv: p.Getenv}
	if p.Events != nil {
		td.Outbox = p.Events
	}
	d, err := FromEnv(td)
	if err != nil {
		return api.Group{}, err
	}
	g := New(d)
	g.Work, err = tradingenv.Work(td)
	return g, err
}

// Deploy is the trading group's function and its recheck.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "trading", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},
	tradingenv.RecheckFunction,
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Trading", Description: "Spot trading: quotes, orders and positions."}, Files: []string{"trading"}},
}
