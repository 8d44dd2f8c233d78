// Command local runs every endpoint group (and, as they arrive, every worker)
// in one process on embedded storage: `make run`. With BACKEND=aws it runs
// against DynamoDB/S3/SQS/KMS (or LocalStack/moto through AWS_ENDPOINT_URL).
//
//	local [--create-resources]          serve on ADDR (default 127.0.0.1:8080)
//	local mint-credit-token --credits N print one first-key credit token
//	local print-openapi                 print the OpenAPI 3.1 document
//	local sign-payment ...              sign an x402 challenge (development)
//	local bench [flags]                 what a request costs (make bench)
//	local fund --address 0x… --asset USDC|WETH|ETH --amount N
//	                                    fund an address on the local chain
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"platformapi/shared/app"
	"platformapi/shared/bench"
	"platformapi/shared/catalog"
	"platformapi/shared/files"
	"platformapi/shared/platform"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg, err := app.ConfigFromEnv()
	if err != nil {
		return err
	}
	if len(args) > 0 && args[0] == "mint-credit-token" {
		return mint(cfg, args[1:])
	}
	if len(args) > 0 && args[0] == "print-openapi" {
		return printOpenAPI()
	}
	if len(args) > 0 && args[0] == "sign-payment" {
		return signPayment(args[1:])
	}
	if len(args) > 0 && args[0] == "fund" {
		return fund(cfg, args[1:])
	}
	if len(args) > 0 && args[0] == "bench" {
		return bench.Main(os.Stdout, args[1:])
	}
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.BoolVar(&cfg.CreateResources, "create-resources", false, "create missing AWS resources first (LocalStack, moto)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return serve(cfg)
}

func mint(cfg app.Config, args []string) error {
	fs := flag.NewFlagSet("mint-credit-token", flag.ContinueOnError)
	credits := fs.Float64("credits", 0, "credits the token grants (required, > 0)")
	ttl := fs.Duration("ttl", 7*24*time.Hour, "how long the token stays redeemable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *credits <= 0 || math.IsInf(*credits, 0) || *credits > 1e9 {
		return errors.New("--credits must be a positive number of credits")
	}
	signer, err := app.Signer(context.Background(), cfg)
	if err != nil {
		return err
	}
	tok, err := signer.Mint(int64(math.Round(*credits*catalog.MicroPerCredit)), time.Now(), *ttl)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// printOpenAPI writes the document of every group: what `make openapi`
// embeds in the public function.
func printOpenAPI() error {
	doc, err := platform.Document()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(doc, '\n'))
	return err
}

func serve(cfg app.Config) error {
	logger := cfg.Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer rt.Close()
	dev, err := openChain(ctx, cfg, rt)
	if err != nil {
		return err
	}
	defer dev.Close()
	api, err := rt.NewServer(logger, nil)
	if err != nil {
		return err
	}
	hooks, err := rt.WebhookWorker(logger.With("worker", "webhooks"))
	if err != nil {
		return err
	}
	runner, err := rt.RunWorker(logger.With("worker", "runs"))
	if err != nil {
		return err
	}
	sweeper, err := rt.FileSweeper()
	if err != nil {
		return err
	}
	dbWorker, err := rt.DatabasesWorker(logger.With("worker", "databases"))
	if err != nil {
		return err
	}
	// The workers poll the durable embedded queues until shutdown; each finishes
	// what it holds before rt.Close (deferred earlier, so run later).
	var workers sync.WaitGroup
	defer workers.Wait()
	workers.Go(func() { hooks.Run(ctx) })
	workers.Go(func() { rt.EventOutbox().RunOutbox(ctx, logger.With("worker", "webhook-outbox")) })
	workers.Go(func() { runner.Run(ctx) })
	workers.Go(func() { sweeper.SweepEvery(ctx, files.SweepInterval, logger.With("worker", "file-sweeper")) })
	recheck, err := rt.TradingRecheck(logger.With("worker", "trading-recheck"))
	if err != nil {
		return err
	}
	workers.Go(func() { every(ctx, logger, "trading recheck", tradingRecheckEvery, recheck) })
	workers.Go(func() { dbWorker.Run(ctx, rt.DatabasesQueue) })
	workers.Go(func() { rt.SweepHolds(ctx, logger.With("worker", "hold-sweeper")) })
	walletsWorker, walletsSvc := rt.WalletsWorker(logger.With("worker", "wallets"))
	workers.Go(func() { walletsWorker.Run(ctx, rt.WalletsQueue) })
	workers.Go(func() { every(ctx, logger, "wallets recheck", walletsRecheckEvery, walletsSvc.Recheck) })
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	logger.Info("listening", "addr", ln.Addr().String(), "backend", cfg.Backend, "dataDir", cfg.DataDir)
	// The test harness reads this line to find the port when ADDR ends in :0.
	fmt.Fprintf(os.Stdout, "listening on http://%s\n", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 35*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	return nil
}

// tradingRecheckEvery is how often the local server re-checks resting
// trading orders (on AWS an EventBridge rule runs functions/trading-recheck
// each minute): often enough that a limit order fills within seconds of the
// tape's minute crossing it.
const tradingRecheckEvery = 5 * time.Second

// walletsRecheckEvery is how often the local server advances wallet
// transactions no message is waiting for (decided approvals, mostly); on
// AWS the wallets-recheck function runs each minute.
const walletsRecheckEvery = 5 * time.Second

// every runs pass each interval until shutdown; a failed pass is logged and
// the next one tries again.
func every(ctx context.Context, logger *slog.Logger, name string, interval time.Duration, pass func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := pass(ctx); err != nil && ctx.Err() == nil {
				logger.Error(name+" failed", "error", err.Error())
			}
		}
	}
}
