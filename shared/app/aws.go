package app

import (
	"context"
	"errors"
)

// errAWSNotWired is returned until the AWS adapters are wired in.
var errAWSNotWired = errors.New("app: BACKEND=aws is not available in this build yet")

func openAWS(ctx context.Context, c Config, rt *Runtime) error { return errAWSNotWired }

func awsSigningSeed(ctx context.Context, arn string) ([]byte, error) { return nil, errAWSNotWired }
