// Command wallets is the Lambda function of the managed-wallets group
// (CONTRACT "Managed wallets"): wallets whose keys are generated here and
// sealed by KMS, their policies, transaction and signature quotes, sends
// and signatures. Transactions are carried on by wallets-worker (the
// wallets queue) and wallets-recheck (each minute).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/api/walletsapi"
	"platformapi/shared/catalog"
	"platformapi/shared/chain"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/wallets"
	"platformapi/shared/webhooks"
)

func main() {
	lambdaedge.Serve("wallets", func(ctx context.Context, e *lambdaedge.Env) (func(*api.Kernel), error) {
		svc, err := service(ctx, e)
		if err != nil {
			return nil, err
		}
		d := walletsapi.Deps{Service: svc}
		return func(k *api.Kernel) { walletsapi.Register(k, d) }, nil
	})
}

// service is managed wallets as every wallet function builds it: the
// chains from RPC_URL_<chainId>, the envelope key that opens wallet keys,
// the wallets queue, the webhook queue and the price of a transaction.
// Each dependency is required: CDK grants them all to this function, so a
// missing one is a broken deployment, better refused at cold start than
// discovered half-way through a transaction.
func service(ctx context.Context, e *lambdaedge.Env) (*wallets.Service, error) {
	nets, err := chain.FromEnv(os.Environ())
	if err != nil {
		return nil, err
	}
	if e.Kernel.Sealer == nil {
		return nil, errors.New("wallets: the envelope key is not configured (KMS_KEY_ID)")
	}
	if e.Webhooks == nil {
		return nil, errors.New("wallets: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
	}
	q, err := e.Queue(ctx, e.AWS.Names.WalletsQueue)
	if err != nil {
		return nil, fmt.Errorf("wallets: wallets queue: %w", err)
	}
	if q == nil {
		return nil, errors.New("wallets: the wallets queue is not configured (WALLETS_QUEUE_URL)")
	}
	entry, _ := catalog.Lookup(wallets.ServiceID)
	op, ok := entry.Op(wallets.OpTransactionsCreate)
	if !ok {
		return nil, fmt.Errorf("wallets: the catalog has no price for %s", wallets.OpTransactionsCreate)
	}
	return wallets.New(wallets.Config{
		Store: e.Kernel.Store, Sealer: e.Kernel.Sealer, Networks: nets, Queue: q,
		Events:     webhooks.NewRepo(webhooks.Config{Store: e.Kernel.Store, Queue: e.Webhooks}),
		PriceMicro: op.PriceMicro, Logger: e.Logger,
	}), nil
}
