// Command webhook-worker delivers webhook events from the webhook queue
// (SQS event source with partial batch failures), signing each delivery
// with the webhook's secret, opened with the KMS envelope key.
package main

import (
	"context"
	"errors"
	"os"

	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeWorker("webhook-worker", func(ctx context.Context, e *lambdaedge.Env) (work.Worker, error) {
		if e.Webhooks == nil {
			return work.Worker{}, errors.New("webhook-worker: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
		}
		backoff, err := webhooks.RetryBackoff(os.Getenv)
		if err != nil {
			return work.Worker{}, err
		}
		return webhooks.Work(webhooks.WorkDeps{Store: e.Store, Sealer: e.Sealer, Queue: e.Webhooks, Logger: e.Logger,
			AllowPrivate: webhooks.AllowPrivate(os.Getenv), Backoff: backoff}).Worker(work.Webhooks.Consumer)
	})
}
