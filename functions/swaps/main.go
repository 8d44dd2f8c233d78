// Command swaps is the Lambda function of the universal-swaps group
// (docs/swaps.md): tokens, quotes and route status from the
// LI.FI-compatible router at LIFI_BASE_URL, and swaps executed from a
// managed wallet as wallet transactions, which wallets-worker and
// wallets-recheck carry on.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/swaps/swapsapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/lambdaedge/walletslambda"
)

func main() {
	httpedge.Serve("swaps", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		s, err := walletslambda.Services(ctx, e.Env)
		return swapsapi.New(s), err
	})
}
