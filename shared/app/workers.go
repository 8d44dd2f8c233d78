package app

import (
	"context"
	"log/slog"
	"os"
	"time"

	"platformapi/shared/api"
	"platformapi/shared/credits"
	"platformapi/shared/databases"
	"platformapi/shared/files"
	"platformapi/shared/platform"
	"platformapi/shared/runs"
	"platformapi/shared/swaps"
	"platformapi/shared/trading"
	"platformapi/shared/trading/tradingenv"
	"platformapi/shared/wallets"
	"platformapi/shared/webhooks"
	"platformapi/shared/work"
)

// Work is every queue worker and scheduled pass of the local process, on
// the queues and storage the server uses; work.Run runs them. On AWS each
// is its own function (the declarations in package work say which).
func (r *Runtime) Work(logger *slog.Logger) ([]work.Worker, []work.Pass, error) {
	events := webhooks.NewRepo(webhooks.Config{Store: r.Store, Sealer: r.Sealer, Queue: r.Queue(work.Webhooks)})
	allowPrivate := os.Getenv("ALLOW_PRIVATE_WEBHOOKS") == "true"
	hooks := webhooks.NewWorker(webhooks.WorkerConfig{
		Config: webhooks.Config{Store: r.Store, Sealer: r.Sealer, Queue: r.Queue(work.Webhooks), Guard: webhooks.Guard{AllowPrivate: allowPrivate}},
		Logger: logger.With("worker", work.Webhooks.Consumer),
	})
	runner := runs.NewWorker(runs.WorkerConfig{
		Config:   runs.Config{Store: r.Store, Queue: r.Queue(work.Runs), Artifacts: r.Artifacts},
		Services: r.Services(), Sealer: r.Sealer, Logger: logger.With("worker", work.Runs.Consumer), Timeout: r.Config.RunTimeout,
	})
	transfers := databases.NewWorker(databases.WorkerConfig{Service: r.Databases, Events: events, Logger: logger.With("worker", work.Databases.Consumer)})
	ws, _ := swaps.Wire(platform.WalletsConfig(api.Config{Store: r.Store, Logger: logger.With("worker", work.Wallets.Consumer), Events: events},
		platform.Deps{Sealer: r.Sealer, Networks: r.Networks, WalletsQueue: r.Queue(work.Wallets)}))

	venue, err := tradingenv.Config(os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	venue.Store, venue.Logger = r.Store, logger.With("worker", work.TradingRecheck.Function)
	orders, err := trading.New(venue)
	if err != nil {
		return nil, nil, err
	}
	grace := r.Config.holdGrace()
	workers := []work.Worker{hooks.Work(), runner.Work(), transfers.Work(r.Queue(work.Databases)), wallets.NewWorker(ws).Work(r.Queue(work.Wallets))}
	passes := []work.Pass{
		{Name: work.WebhookOutbox.Function, Every: work.WebhookOutbox.LocalEvery(),
			Run: events.OutboxPass(logger.With("worker", work.WebhookOutbox.Function), time.Now())},
		{Name: work.FileSweeper.Function, Every: work.FileSweeper.LocalEvery(),
			Run: files.NewRepo(files.Config{Store: r.Store, Bucket: r.Files}).SweepPass(logger.With("worker", work.FileSweeper.Function))},
		// A shortened HOLD_GRACE sweeps as often, so that a test waits for
		// no more than it.
		{Name: work.HoldSweeper.Function, Every: min(work.HoldSweeper.LocalEvery(), grace),
			Run: credits.NewLedger(r.Store, time.Now).SweepPass(grace, logger.With("worker", work.HoldSweeper.Function))},
		{Name: work.TradingRecheck.Function, Every: work.TradingRecheck.LocalEvery(), Run: func(ctx context.Context) error { return orders.RecheckAndPublish(ctx, events) }},
		{Name: work.WalletsRecheck.Function, Every: work.WalletsRecheck.LocalEvery(), Run: ws.Recheck},
	}
	return workers, passes, nil
}
