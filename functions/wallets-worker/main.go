// Command wallets-worker drives wallet transactions from the wallets queue
// (SQS event source with partial batch failures): it decides approvals,
// signs, broadcasts and watches for the receipt, settles the credit hold,
// and publishes each wallet.transaction.<state> event. A transaction still
// in flight is sent again as a new, delayed message, so the queue's receive
// count and dead-letter queue are left for real failures.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"platformapi/shared/catalog"
	"platformapi/shared/chain"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/swaps"
	"platformapi/shared/swaps/lifi"
	"platformapi/shared/wallets"
	"platformapi/shared/webhooks"
)

func main() {
	lambdaedge.ServeWorker("wallets-worker", func(ctx context.Context, e *lambdaedge.Env) (lambdaedge.Batcher, error) {
		ws, _, err := services(ctx, e)
		if err != nil {
			return nil, err
		}
		return wallets.NewWorker(ws), nil
	})
}

// services are managed wallets and swaps as every wallet function builds
// them (shared/platform.Wallets does the same for the local server): the
// chains from RPC_URL_<chainId>, the envelope key that opens wallet keys,
// the wallets and webhook queues, the LI.FI router and the catalogue's
// prices. A swap is told of each move of its wallet transactions, so the
// worker and the recheck build the swaps service too. Each dependency is
// required: CDK grants them all to these functions, so a missing one is a
// broken deployment, better refused at cold start than found half-way
// through a transaction.
func services(ctx context.Context, e *lambdaedge.Env) (*wallets.Service, *swaps.Service, error) {
	nets, err := chain.FromEnv(os.Environ())
	if err != nil {
		return nil, nil, err
	}
	if e.Kernel.Sealer == nil {
		return nil, nil, errors.New("wallets: the envelope key is not configured (KMS_KEY_ID)")
	}
	if e.Webhooks == nil {
		return nil, nil, errors.New("wallets: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
	}
	q, err := e.Queue(ctx, e.AWS.Names.WalletsQueue)
	if err != nil {
		return nil, nil, fmt.Errorf("wallets: wallets queue: %w", err)
	}
	if q == nil {
		return nil, nil, errors.New("wallets: the wallets queue is not configured (WALLETS_QUEUE_URL)")
	}
	events := webhooks.NewRepo(webhooks.Config{Store: e.Kernel.Store, Queue: e.Webhooks})
	var sw *swaps.Service
	ws := wallets.New(wallets.Config{
		Store: e.Kernel.Store, Sealer: e.Kernel.Sealer, Networks: nets, Queue: q, Events: events,
		PriceMicro: price(wallets.ServiceID, wallets.OpTransactionsCreate), Logger: e.Logger,
		OnSwapTx: func(ctx context.Context, sc wallets.Scope, swapID string) {
			if _, err := sw.Refresh(ctx, sc, swapID); err != nil {
				e.Logger.Error("swaps: refresh", "swap", swapID, "error", err.Error())
			}
		},
	})
	sw = swaps.New(swaps.Config{
		Store: e.Kernel.Store, Wallets: ws, Events: events, Logger: e.Logger,
		Router:     lifi.New(lifi.Config{BaseURL: os.Getenv("LIFI_BASE_URL"), APIKey: os.Getenv("LIFI_API_KEY")}),
		PriceMicro: price(swaps.ServiceID, "swaps.execute"),
	})
	return ws, sw, nil
}

func price(service, operation string) int64 {
	svc, _ := catalog.Lookup(service)
	op, _ := svc.Op(operation)
	return op.PriceMicro
}
