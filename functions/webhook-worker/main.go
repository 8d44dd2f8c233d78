// Command webhook-worker is the Lambda function fed by the webhook queue: it
// signs and sends each delivery, reschedules a failed attempt with backoff
// through the message's visibility, and answers with the batch's failed
// items only, so one slow or failing receiver never redelivers the others.
// Wiring only: configuration and storage come from shared/app, the work from
// shared/webhooks.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/app"
	"platformapi/shared/webhooks"
	"platformapi/shared/webhooks/lambdaworker"
)

func main() {
	cfg := app.ConfigFromEnv()
	logger := cfg.Logger().With(slog.String("function", "webhook-worker"))
	rt, err := app.Open(context.Background(), cfg)
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		os.Exit(1)
	}
	w := webhooks.NewWorker(webhooks.WorkerConfig{
		Config: webhooks.Config{
			Store: rt.Store, Sealer: rt.Sealer, Queue: rt.WebhookQueue,
			Guard: webhooks.Guard{AllowPrivate: os.Getenv("ALLOW_PRIVATE_WEBHOOKS") == "true"},
		},
		Logger: logger,
	})
	lambda.Start(lambdaworker.Handler(w))
}
