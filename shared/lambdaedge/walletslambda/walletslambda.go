// Package walletslambda gives the Lambda functions that serve or advance
// managed wallets and swaps (wallets, swaps, wallets-worker,
// wallets-recheck) their ports from the function's environment. It is its
// own package so that the groups, which every process links, do not link
// the Lambda runtime, and under lambdaedge because it builds on it: the
// wallets domain never imports the edge.
package walletslambda

import (
	"context"
	"errors"
	"fmt"
	"os"

	"platformapi/shared/chain"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/ports"
	"platformapi/shared/queue"
	"platformapi/shared/wallets"
	"platformapi/shared/work"
)

// Ports are a wallet function's ports, on which it builds its group
// (walletsapi.Group, swapsapi.Group) or its work (walletsenv.Work). Each dependency
// is required: CDK grants them all to these functions, so a missing one is
// a broken deployment, better refused at cold start than found half-way
// through a transaction. The swap router is LI.FI at LIFI_BASE_URL, which a
// deployment always sets (its settings' default is LI.FI's public API).
func Ports(ctx context.Context, e *lambdaedge.Env) (ports.Ports, error) {
	nets, err := chain.FromEnv(os.Environ())
	if err != nil {
		return ports.Ports{}, err
	}
	if e.Sealer == nil {
		return ports.Ports{}, errors.New("wallets: the envelope key is not configured (KMS_KEY_ID)")
	}
	if e.Webhooks == nil {
		return ports.Ports{}, errors.New("wallets: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
	}
	q, err := e.Queue(ctx, e.AWS.Names.Queue(wallets.Queue))
	if err != nil {
		return ports.Ports{}, fmt.Errorf("wallets: wallets queue: %w", err)
	}
	if q == nil {
		return ports.Ports{}, errors.New("wallets: the wallets queue is not configured (WALLETS_QUEUE_URL)")
	}
	return e.Ports(map[work.Queue]queue.Queue{wallets.Queue: q}, nil, nil, nets), nil
}
