// Command hold-sweeper is the scheduled Lambda that releases the credit
// holds a crash orphaned (credits.Ledger.SweepHolds): a function that died
// between taking a hold and capturing or releasing it left the hold's
// amount out of the balance. An EventBridge rule invokes it every five
// minutes; it releases each hold still held credits.GraceAfterDeadline
// after its holder's deadline, with its ledger entry. The local server runs
// the same sweep in a goroutine instead.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/awsenv"
	"platformapi/shared/credits"
	"platformapi/shared/store/dynamostore"
)

func main() {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(os.Getenv("LOG_LEVEL"))))
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With(slog.String("function", "hold-sweeper"))
	env, err := awsenv.New(context.Background())
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		os.Exit(1)
	}
	ledger := credits.NewLedger(dynamostore.New(env.DynamoDB(), env.Names.Table), time.Now)
	lambda.Start(func(ctx context.Context, _ events.EventBridgeEvent) error {
		n, err := ledger.SweepHolds(ctx, credits.GraceAfterDeadline)
		if err != nil {
			// Failing the invocation shows in the function's error alarm;
			// the next run resumes from the cursor this one left.
			logger.Error("hold sweep failed", "released", n, "error", err.Error())
			return err
		}
		logger.Info("hold sweep", "released", n)
		return nil
	})
}
