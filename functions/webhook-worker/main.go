// Command webhook-worker is the Lambda function fed by the webhook queue: it
// signs and sends each delivery, reschedules a failed attempt with backoff
// through the message's visibility, and answers with the batch's failed
// items only, so one slow or failing receiver never redelivers the others.
package main

import (
	"log/slog"

	"platformapi/shared/app"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeWorker("webhook-worker", func(rt *app.Runtime, logger *slog.Logger) (lambdaedge.Batcher, error) {
		return rt.WebhookWorker(logger)
	})
}
