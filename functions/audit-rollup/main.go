// Command audit-rollup counts audit events into the hourly usage counters
// off the request path: it is triggered by the table's DynamoDB stream
// (inserts of audit events only, filtered by the event source mapping) and
// answers with a partial batch response, so Lambda retries a batch from the
// first event not yet counted. Counting is exactly once however often a
// record is delivered (see audit.Rollup); after its retries a batch's
// position goes to the dead-letter queue, whose depth raises an alarm.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/audit"
	"platformapi/shared/audit/auditstream"
	"platformapi/shared/awsenv"
	"platformapi/shared/store/dynamostore"
)

func main() {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(os.Getenv("LOG_LEVEL"))))
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With(slog.String("function", "audit-rollup"))
	slog.SetDefault(logger)
	// Built once at cold start; a warm process reuses it for every batch.
	env, err := awsenv.New(context.Background())
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		os.Exit(1)
	}
	rollup := audit.NewRollup(dynamostore.New(env.DynamoDB(), env.Names.Table))
	lambda.Start(func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return auditstream.Handle(ctx, rollup, ev), nil
	})
}
