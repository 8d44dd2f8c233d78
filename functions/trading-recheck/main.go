// Command trading-recheck is managed trading's scheduled worker: an
// EventBridge rule invokes it each minute to advance every resting order
// against the venue, settle credit holds a crash left pending, and publish
// each transition as its trading.order.<status> webhook event. A pass is
// idempotent (every order write is conditional on its revision), so an
// overlapping or retried invocation applies no fill twice.
// setup builds the pass once per cold start: the table, the webhook queue
// and the venue the trading function uses.
package main

import (
	"context"
	"os"

	"platformapi/shared/lambdaedge"
	"platformapi/shared/trading"
	"platformapi/shared/trading/tradingenv"
	"platformapi/shared/webhooks"
)

func main() {
	lambdaedge.ServeScheduled("trading-recheck", func(ctx context.Context, e *lambdaedge.Env) (func(context.Context) error, error) {
		cfg, err := tradingenv.Config(os.Getenv)
		if err != nil {
			return nil, err
		}
		cfg.Store, cfg.Logger = e.Store, e.Logger
		svc, err := trading.New(cfg)
		if err != nil {
			return nil, err
		}
		pub := webhooks.NewRepo(webhooks.Config{Store: e.Store, Queue: e.Webhooks})
		return func(ctx context.Context) error { return svc.RecheckAndPublish(ctx, pub) }, nil
	})
}
