package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"platformapi/shared/awsenv"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/envelope/kmsenvelope"
	"platformapi/shared/queue"
	"platformapi/shared/queue/sqsqueue"
	"platformapi/shared/store/dynamostore"
)

// openAWS builds the AWS clients once per process (a Lambda's cold start)
// from the standard environment and the resource names CDK passes.
func openAWS(ctx context.Context, c Config, rt *Runtime) error {
	env, err := awsenv.New(ctx)
	if err != nil {
		return fmt.Errorf("app: aws config: %w", err)
	}
	if c.CreateResources {
		if err := env.CreateResources(ctx); err != nil {
			return fmt.Errorf("app: create resources: %w", err)
		}
	}
	rt.AWS = env
	rt.Store = dynamostore.New(env.DynamoDB(), env.Names.Table)
	rt.Sealer = kmsenvelope.New(env.KMS(), env.Names.KMSKeyID)
	if rt.WebhookQueue, err = openQueue(ctx, env, env.Names.WebhookQueue); err != nil {
		return fmt.Errorf("app: webhook queue: %w", err)
	}
	if rt.RunsQueue, err = openQueue(ctx, env, env.Names.RunsQueue); err != nil {
		return fmt.Errorf("app: runs queue: %w", err)
	}
	rt.Artifacts = s3blob.New(env.S3(), env.Names.ArtifactsBucket)
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

// awsSigningSeed derives the Ed25519 seed from the Secrets Manager secret CDK
// generates (any string: the seed is its SHA-256).
func awsSigningSeed(ctx context.Context, arn string) ([]byte, error) {
	env, err := awsenv.New(ctx)
	if err != nil {
		return nil, err
	}
	out, err := secretsmanager.NewFromConfig(env.Config).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &arn})
	if err != nil {
		return nil, fmt.Errorf("read credit-token secret: %w", err)
	}
	if out.SecretString == nil || len(*out.SecretString) < 32 {
		return nil, errors.New("credit-token secret must be a string of at least 32 characters")
	}
	seed := sha256.Sum256([]byte(*out.SecretString))
	return seed[:], nil
}

// inLambda reports whether the process runs on Lambda, where the filesystem
// is read-only and a signing key file must never be created.
func inLambda() bool { return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" }
