// Command run-worker is the Lambda function fed by the runs queue: it
// executes each durable run once through the invoke pipeline, on the
// authority of the key that created it, keeps the output as an artifact,
// reschedules a transient upstream failure with backoff through the
// message's visibility, and answers with the batch's failed items only.
// Wiring only: configuration, storage and the managed services come from
// shared/app, the work from shared/runs.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/app"
	"platformapi/shared/runs"
	"platformapi/shared/webhooks/lambdaworker"
)

func main() {
	cfg := app.ConfigFromEnv()
	logger := cfg.Logger().With(slog.String("function", "run-worker"))
	rt, err := app.Open(context.Background(), cfg)
	if err == nil && (rt.RunsQueue == nil || rt.Artifacts == nil) {
		err = errors.New("the runs queue (RUNS_QUEUE_URL) and the artifacts bucket (ARTIFACTS_BUCKET) are required")
	}
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		os.Exit(1)
	}
	w := runs.NewWorker(runs.WorkerConfig{
		Config:   runs.Config{Store: rt.Store, Queue: rt.RunsQueue, Artifacts: rt.Artifacts},
		Services: rt.Services(), Logger: logger,
	})
	lambda.Start(lambdaworker.Handler(w))
}
