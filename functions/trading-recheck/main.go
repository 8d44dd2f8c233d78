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

	"platformapi/shared/groups/trading/tradingenv"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeScheduled("trading-recheck", func(ctx context.Context, e *lambdaedge.Env) (func(context.Context) error, error) {
		w, err := tradingenv.Work(tradingenv.Deps{Store: e.Store, Outbox: e.Events, Logger: e.Logger})
		if err != nil {
			return nil, err
		}
		return w.Pass(tradingenv.RecheckFunction.Name)
	})
}
