// Command webhook-outbox is the scheduled Lambda that fans out the webhook
// events a crash left in the outbox (webhooks.Repo.SweepOutbox): a request
// records its events with its writes and fans them out itself once they
// commit; when its function died or failed in between, the event waits in
// the outbox. An EventBridge rule invokes this each minute; it takes every
// event older than webhooks.OutboxGrace, so never one whose request may
// still be fanning it out (and a second fan-out creates no delivery twice).
// The local server runs the same pass on a ticker (work.Run).
package main

import (
	"context"
	"time"

	"platformapi/shared/groups/webhooks"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeScheduled("webhook-outbox", func(ctx context.Context, e *lambdaedge.Env) (func(context.Context) error, error) {
		return webhooks.NewRepo(webhooks.Config{Store: e.Store, Queue: e.Webhooks}).OutboxPass(e.Logger, time.Time{}), nil
	})
}
