package tradingenv

import (
	"context"
	"time"

	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/trading"
	"platformapi/shared/work"
)

// RecheckFunction is the recheck's Lambda: it advances resting orders each
// minute (the paper tape's resolution), every five seconds locally so
// that a limit order fills within seconds of it becoming due, and
// publishes their trading.order.<status> events. Its timeout stays under
// the period so passes rarely overlap (an overlap is harmless: every order
// write is conditional on its revision).
var RecheckFunction = deploy.Function{Name: "trading-recheck", MemoryMiB: 256, Timeout: 55 * time.Second,
	Uses: deploy.Uses{deploy.UseTable, deploy.Send(work.Webhooks)}, Schedule: work.Schedule{Every: time.Minute, Local: 5 * time.Second}}

// Service is the trading service on p's table and the venue p's
// configuration names.
func Service(p ports.Ports, logger string) (*trading.Service, error) {
	venue, err := Config(p.Env)
	if err != nil {
		return nil, err
	}
	venue.Store, venue.Logger = p.Store, p.Log(logger)
	if p.Events != nil {
		venue.Outbox = p.Events
	}
	return trading.New(venue)
}

// Work is the trading group's work on p: the recheck that fills due orders
// (their events commit with them).
func Work(p ports.Ports) (ports.Work, error) {
	orders, err := Service(p, RecheckFunction.Name)
	if err != nil {
		return ports.Work{}, err
	}
	recheck := func(ctx context.Context) error { _, err := orders.Recheck(ctx, time.Now()); return err }
	return ports.Work{Passes: []work.Pass{{Name: RecheckFunction.Name, Every: RecheckFunction.Schedule.LocalEvery(), Run: recheck}}}, nil
}
