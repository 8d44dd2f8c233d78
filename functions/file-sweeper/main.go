// Command file-sweeper is the scheduled Lambda that deletes file objects
// no record owns (files.Repo.Sweep): those of uploads whose process died,
// or whose commit failed, between the object and the record, and those of
// deletions that died between the record and the object. An EventBridge
// rule invokes it every files.SweepInterval; the local server runs the same
// sweep in a goroutine instead.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/awsenv"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/files"
	"platformapi/shared/store/dynamostore"
)

func main() {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(os.Getenv("LOG_LEVEL"))))
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With(slog.String("function", "file-sweeper"))
	env, err := awsenv.New(context.Background())
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		os.Exit(1)
	}
	repo := files.NewRepo(files.Config{
		Store:  dynamostore.New(env.DynamoDB(), env.Names.Table),
		Bucket: s3blob.New(env.S3(), env.Names.FilesBucket),
	})
	lambda.Start(func(ctx context.Context, _ events.EventBridgeEvent) error {
		n, err := repo.Sweep(ctx, files.MinOrphanAge)
		if err != nil {
			// Failing the invocation shows in the function's error alarm;
			// the next scheduled run finds what this one left.
			logger.Error("file sweep failed", "swept", n, "error", err.Error())
			return err
		}
		logger.Info("file sweep", "swept", n)
		return nil
	})
}
