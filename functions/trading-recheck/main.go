// Command trading-recheck is managed trading's scheduled worker: an
// EventBridge rule invokes it each minute to advance every resting order
// against the venue, settle credit holds a crash left pending, and publish
// each transition as its trading.order.<status> webhook event. A pass is
// idempotent (every order write is conditional on its revision), so an
// overlapping or retried invocation applies no fill twice.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/awsenv"
	"platformapi/shared/queue/sqsqueue"
	"platformapi/shared/store/dynamostore"
	"platformapi/shared/trading"
	"platformapi/shared/trading/tradingenv"
	"platformapi/shared/webhooks"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With(slog.String("function", "trading-recheck"))
	pass, err := setup(context.Background(), logger)
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(func(ctx context.Context, _ events.EventBridgeEvent) error { return pass(ctx) })
}

// setup builds the pass once per cold start: the table, the webhook queue
// and the venue the trading function uses.
func setup(ctx context.Context, logger *slog.Logger) (func(context.Context) error, error) {
	aws, err := awsenv.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("trading-recheck: aws config: %w", err)
	}
	st := dynamostore.New(aws.DynamoDB(), aws.Names.Table)
	url, err := aws.QueueURL(ctx, aws.Names.WebhookQueue)
	if err != nil {
		return nil, fmt.Errorf("trading-recheck: webhook queue: %w", err)
	}
	cfg, err := tradingenv.Config(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.Store, cfg.Logger = st, logger
	svc, err := trading.New(cfg)
	if err != nil {
		return nil, err
	}
	pub := webhooks.NewRepo(webhooks.Config{Store: st, Queue: sqsqueue.New(aws.SQS(), url)})
	return func(ctx context.Context) error { return svc.RecheckAndPublish(ctx, pub) }, nil
}
