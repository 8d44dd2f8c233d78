// Command trading is the Lambda function of the managed-trading group
// (spec 4.4): quotes, orders and positions on the venue the environment
// names (package tradingenv; the paper venue by default). Resting orders
// are also advanced by functions/trading-recheck each minute.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/api/tradingapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/trading/tradingenv"
)

func main() {
	httpedge.Serve("trading", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		venue, err := tradingenv.Config(os.Getenv)
		if err != nil {
			return nil, err
		}
		venue.Logger = e.Logger
		d := tradingapi.Deps{Store: e.Kernel.Store, Trading: venue}
		return func(k *api.Kernel) error { return tradingapi.Register(k, d) }, nil
	})
}
