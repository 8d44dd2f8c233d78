package tradingenv

import (
	"context"

	"platformapi/shared/ports"
	"platformapi/shared/trading"
	"platformapi/shared/work"
)

// Service is the trading service on p's table and the venue p's
// configuration names.
func Service(p ports.Ports, logger string) (*trading.Service, error) {
	venue, err := Config(p.Env)
	if err != nil {
		return nil, err
	}
	venue.Store, venue.Logger = p.Store, p.Log(logger)
	return trading.New(venue)
}

// Work is the trading group's work on p: the recheck that fills due orders
// and publishes their events.
func Work(p ports.Ports) (ports.Work, error) {
	orders, err := Service(p, work.TradingRecheck.Function)
	if err != nil {
		return ports.Work{}, err
	}
	recheck := func(ctx context.Context) error { return orders.RecheckAndPublish(ctx, p.Events) }
	return ports.Work{Passes: []work.Pass{{Name: work.TradingRecheck.Function, Every: work.TradingRecheck.LocalEvery(), Run: recheck}}}, nil
}
