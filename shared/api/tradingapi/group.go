package tradingapi

import (
	"platformapi/shared/api"
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
	return api.Group{Name: "trading", Register: func(k *api.Kernel) error { return Register(k, d) }, Work: w}, nil
}
