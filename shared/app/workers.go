package app

import (
	"errors"
	"log/slog"
	"os"

	"platformapi/shared/runs"
	"platformapi/shared/webhooks"
)

// WebhookWorker sends webhook deliveries from the webhook queue.
func (r *Runtime) WebhookWorker(logger *slog.Logger) (*webhooks.Worker, error) {
	if r.WebhookQueue == nil {
		return nil, errors.New("app: the webhook worker needs the webhook queue (WEBHOOK_QUEUE_URL)")
	}
	return webhooks.NewWorker(webhooks.WorkerConfig{
		Config: webhooks.Config{
			Store: r.Store, Sealer: r.Sealer, Queue: r.WebhookQueue,
			Guard: webhooks.Guard{AllowPrivate: os.Getenv("ALLOW_PRIVATE_WEBHOOKS") == "true"},
		},
		Logger: logger,
	}), nil
}

// RunWorker executes durable runs from the runs queue.
func (r *Runtime) RunWorker(logger *slog.Logger) (*runs.Worker, error) {
	if r.RunsQueue == nil || r.Artifacts == nil {
		return nil, errors.New("app: the run worker needs the runs queue (RUNS_QUEUE_URL) and the artifacts bucket (ARTIFACTS_BUCKET)")
	}
	return runs.NewWorker(runs.WorkerConfig{
		Config:   runs.Config{Store: r.Store, Queue: r.RunsQueue, Artifacts: r.Artifacts},
		Services: r.Services(), Sealer: r.Sealer, Logger: logger,
	}), nil
}
