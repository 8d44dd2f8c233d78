package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"platformapi/shared/api"
	"platformapi/shared/credits"
	"platformapi/shared/files"
	"platformapi/shared/platform"
	"platformapi/shared/runs"
	"platformapi/shared/trading"
	"platformapi/shared/trading/tradingenv"
	"platformapi/shared/wallets"
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
		Services: r.Services(), Sealer: r.Sealer, Logger: logger, Timeout: r.Config.RunTimeout,
	}), nil
}

// FileSweeper is the files repository that sweeps orphaned file objects
// (files.Repo.Sweep): the local server runs it every hour.
func (r *Runtime) FileSweeper() (*files.Repo, error) {
	if r.Files == nil {
		return nil, errors.New("app: the file sweeper needs the files bucket (FILES_BUCKET)")
	}
	return files.NewRepo(files.Config{Store: r.Store, Bucket: r.Files}), nil
}

// TradingRecheck is managed trading's scheduled pass (Recheck, then each
// transition's trading.order.<status> event to the webhook queue), on the
// venue the environment names, as the server uses it.
func (r *Runtime) TradingRecheck(logger *slog.Logger) (func(context.Context) error, error) {
	cfg, err := tradingenv.Config(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.Store, cfg.Logger = r.Store, logger
	svc, err := trading.New(cfg)
	if err != nil {
		return nil, err
	}
	pub := webhooks.NewRepo(webhooks.Config{Store: r.Store, Sealer: r.Sealer, Queue: r.WebhookQueue})
	return func(ctx context.Context) error { return svc.RecheckAndPublish(ctx, pub) }, nil
}

// WalletsWorker is the wallets queue's consumer and the recheck pass, on
// the service the server uses.
func (r *Runtime) WalletsWorker(logger *slog.Logger) (*wallets.Worker, *wallets.Service) {
	svc, _ := platform.Wallets(api.Config{Store: r.Store, Logger: logger,
		Events: webhooks.NewRepo(webhooks.Config{Store: r.Store, Sealer: r.Sealer, Queue: r.WebhookQueue})},
		platform.Deps{Sealer: r.Sealer, Networks: r.Networks, WalletsQueue: r.WalletsQueue})
	return wallets.NewWorker(svc), svc
}

// SweepHolds releases, every minute (or every Config.HoldGrace when
// shorter), the credit holds a crash orphaned (credits.Ledger.SweepHolds),
// until ctx is done; on AWS the scheduled hold-sweeper function does.
func (r *Runtime) SweepHolds(ctx context.Context, logger *slog.Logger) {
	grace := r.Config.holdGrace()
	ledger := credits.NewLedger(r.Store, time.Now)
	t := time.NewTicker(min(time.Minute, grace))
	defer t.Stop()
	for {
		n, err := ledger.SweepHolds(ctx, grace)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			logger.Error("hold sweep failed", "released", n, "error", err.Error())
		case n > 0:
			logger.Info("hold sweep", "released", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// EventOutbox is the webhook publisher whose outbox sweep the local server
// runs (webhooks.Repo.RunOutbox): at start it fans out the events a killed
// process recorded but did not; on AWS the scheduled webhook-outbox
// function sweeps.
func (r *Runtime) EventOutbox() *webhooks.Repo {
	return webhooks.NewRepo(webhooks.Config{Store: r.Store, Sealer: r.Sealer, Queue: r.WebhookQueue})
}
