// Command wallets is the Lambda function of the managed-wallets group
// (docs/wallets.md): wallets whose keys are generated here and
// sealed by KMS, their policies, transaction and signature quotes, sends
// and signatures. Transactions are carried on by wallets-worker (the
// wallets queue) and wallets-recheck (each minute).
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/wallets/walletsapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/lambdaedge/walletslambda"
)

func main() {
	httpedge.Serve("wallets", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		s, err := walletslambda.Services(ctx, e.Env)
		return walletsapi.New(s), err
	})
}
