// Command trading is the Lambda function of the managed-trading group:
// quotes, orders and positions on the venue the environment
// names (package tradingenv; the paper venue by default). Resting orders
// are also advanced by functions/trading-recheck each minute.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/trading/tradingapi"
	"platformapi/shared/groups/trading/tradingenv"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("trading", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		d, err := tradingapi.FromEnv(tradingenv.Deps{Store: e.Store, Outbox: e.Events, Logger: e.Logger})
		return tradingapi.New(d), err
	})
}
