// Command wallets-worker drives wallet transactions from the wallets queue
// (SQS event source with partial batch failures): it decides approvals,
// signs, broadcasts and watches for the receipt, settles the credit hold,
// and publishes each wallet.transaction.<state> event. A transaction still
// in flight is sent again as a new, delayed message, so the queue's receive
// count and dead-letter queue are left for real failures.
package main

import (
	"context"

	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/wallets"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/lambdaedge/walletslambda"
)

func main() {
	lambdaedge.ServeWorker("wallets-worker", func(ctx context.Context, e *lambdaedge.Env) (work.Worker, error) {
		s, err := walletslambda.Services(ctx, e)
		if err != nil {
			return work.Worker{}, err
		}
		return s.Work().Worker(wallets.Queue.Consumer)
	})
}
