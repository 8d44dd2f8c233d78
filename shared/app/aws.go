package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/provision"
	"platformapi/shared/adapters/awsenv/secretseed"
	"platformapi/shared/adapters/awsenv/sharedconfig"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/envelope/kmsenvelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/sqsqueue"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/work"
)

// openAWS builds the AWS clients once per process (a Lambda's cold start)
// from the standard environment and the resource names CDK passes.
func openAWS(ctx context.Context, c Config, rt *Runtime, queues []work.Queue) error {
	env, err := awsenv.New(ctx, awsenv.WithSource(sharedconfig.Load))
	if err != nil {
		return fmt.Errorf("app: aws config: %w", err)
	}
	if c.CreateResources {
		if err := provision.Create(ctx, env, queues); err != nil {
			return fmt.Errorf("app: create resources: %w", err)
		}
	}
	rt.AWS = env
	rt.Store = dynamostore.New(env.DynamoDB(), env.Names.Table)
	rt.Sealer = kmsenvelope.New(env.KMS(), env.Names.KMSKeyID)
	for _, q := range queues {
		if rt.Queues[q.Name], err = openQueue(ctx, env, env.Names.Queue(q)); err != nil {
			return fmt.Errorf("app: %s queue: %w", q.Name, err)
		}
	}
	rt.Artifacts = s3blob.New(env.S3(), env.Names.ArtifactsBucket)
	rt.Files = s3blob.New(env.S3(), env.Names.FilesBucket)
	return nil
}

// openQueue connects a queue. On Lambda only the URL CDK passed counts: a
// function not granted a queue gets none (nil), and cold start makes no
// lookup call. Elsewhere (LocalStack, moto) the URL is looked up by name.
func openQueue(ctx context.Context, env *awsenv.Env, q awsenv.Queue) (queue.Queue, error) {
	if q.URL == "" && inLambda() {
		return nil, nil
	}
	url, err := env.QueueURL(ctx, q)
	if err != nil {
		return nil, err
	}
	return sqsqueue.New(env.SQS(), url), nil
}

// errNoSigningKey: a Lambda without the credit-token secret cannot redeem
// tokens; only the keys function is granted it.
var errNoSigningKey = errors.New("app: no credit-token signing key in this function")

// awsSigningSeed reads the credit-token signing seed from Secrets Manager.
func awsSigningSeed(ctx context.Context, arn string) ([]byte, error) {
	env, err := awsenv.New(ctx, awsenv.WithSource(sharedconfig.Load))
	if err != nil {
		return nil, err
	}
	return secretseed.Load(ctx, env.Config, arn)
}

// inLambda reports whether the process runs on Lambda, where the filesystem
// is read-only and a signing key file must never be created.
func inLambda() bool { return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" }
