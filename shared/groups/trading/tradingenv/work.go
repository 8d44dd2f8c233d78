package tradingenv

import (
	"context"
	"log/slog"
	"platformapi/shared/adapters/store"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/outbox"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/trading"
)

// RecheckFunction is the recheck's Lambda: it advances resting orders each
// minute (the paper tape's resolution), every five seconds locally so
// that a limit order fills within seconds of it becoming due, and
// publishes their trading.order.<status> events. Its timeout stays under
// the period so passes rarely overlap (an overlap is harmless: every order
// write is conditional on its revision).
var RecheckFunction = deploy.Function{Name: "trading-recheck", MemoryMiB: 256, Timeout: 55 * time.Second,
	Uses: deploy.Uses{deploy.UseTable, deploy.Send(work.Webhooks)}, Schedule: work.Schedule{Every: time.Minute, Local: 5 * time.Second}}

// Deps are what the trading service uses: the table, the outbox its order
// events commit through (nil: none), the logger and the configuration that
// names the venue (nil is os.Getenv).
type Deps struct {
	Store  store.Store
	Outbox outbox.Recorder
	Logger *slog.Logger
	Getenv func(string) string
}

// Service is the trading service on d's table and the venue d's
// configuration names, logging on logger.
func Service(d Deps, logger *slog.Logger) (*trading.Service, error) {
	venue, err := Config(func(name string) string { return ports.Env(name, d.Getenv) })
	if err != nil {
		return nil, err
	}
	venue.Store, venue.Logger, venue.Outbox = d.Store, logger, d.Outbox
	return trading.New(venue)
}

// Work is the trading group's work: the recheck that fills due orders
// (their events commit with them).
func Work(d Deps) (ports.Work, error) {
	orders, err := Service(d, ports.Log(d.Logger, RecheckFunction.Name))
	if err != nil {
		return ports.Work{}, err
	}
	recheck := func(ctx context.Context) error { _, err := orders.Recheck(ctx, time.Now()); return err }
	return ports.Work{Passes: []work.Pass{{Name: RecheckFunction.Name, Every: RecheckFunction.Schedule.LocalEvery(), Run: recheck}}}, nil
}
