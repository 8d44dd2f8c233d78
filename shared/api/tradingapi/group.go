package tradingapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/trading/tradingenv"
)

// Group is the trading group on p, on the venue its TRADING_*
// configuration names (package tradingenv), with its recheck.
func Group(p ports.Ports) (api.Group, error) {
	venue, err := tradingenv.Config(p.Env)
	if err != nil {
		return api.Group{}, err
	}
	w, err := tradingenv.Work(p)
	if err != nil {
		return api.Group{}, err
	}
	venue.Logger = p.Logger
	d := Deps{Store: p.Store, Trading: venue}
	if p.Events != nil {
		d.Outbox = p.Events
	}
	return api.Group{Name: "trading", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: w, Deploy: Deploy,
		Services: services, Events: events}, nil
}

// Deploy is the trading group's function and its recheck.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "trading", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},
	tradingenv.RecheckFunction,
}}
