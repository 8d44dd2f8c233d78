// Package walletslambda gives the Lambda functions that serve or advance
// managed wallets and swaps (wallets, swaps, wallets-worker,
// wallets-recheck) their services, wired on the function's environment. It is its
// own package so that the groups, which every process links, do not link
// the Lambda runtime, and under lambdaedge because it builds on it: the
// wallets domain never imports the edge.
package walletslambda

import (
	"context"
	"errors"
	"fmt"
	"os"

	"platformapi/shared/base/chain"
	"platformapi/shared/groups/swaps/walletsenv"
	"platformapi/shared/groups/wallets"
	"platformapi/shared/lambdaedge"
)

// Services are a wallet function's managed wallets and swaps, wired once
// on the function's environment, on which it builds its group
// (walletsapi.New, swapsapi.New) or its work (Services.Work). Each
// dependency is required: CDK grants them all to these functions, so a
// missing one is a broken deployment, better refused at cold start than
// found half-way through a transaction. The swap router is LI.FI at
// LIFI_BASE_URL, which a deployment always sets (its settings' default is
// LI.FI's public API).
func Services(ctx context.Context, e *lambdaedge.Env) (walletsenv.Services, error) {
	nets, err := chain.FromEnv(os.Environ())
	if err != nil {
		return walletsenv.Services{}, err
	}
	if e.Sealer == nil {
		return walletsenv.Services{}, errors.New("wallets: the envelope key is not configured (KMS_KEY_ID)")
	}
	if e.Webhooks == nil {
		return walletsenv.Services{}, errors.New("wallets: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
	}
	q, err := e.Queue(ctx, e.AWS.Names.Queue(wallets.Queue))
	if err != nil {
		return walletsenv.Services{}, fmt.Errorf("wallets: wallets queue: %w", err)
	}
	if q == nil {
		return walletsenv.Services{}, errors.New("wallets: the wallets queue is not configured (WALLETS_QUEUE_URL)")
	}
	return walletsenv.Wire(walletsenv.Deps{Store: e.Store, Sealer: e.Sealer, Chains: nets, Queue: q, Outbox: e.Events,
		Router: walletsenv.Router(os.Getenv), Logger: e.Logger}), nil
}
