// Package awsenv builds the AWS side of the process from its environment:
// one aws.Config with bounded retries and per-call timeouts, the resource
// names CDK hands to every function (with defaults for LocalStack and moto),
// the SDK clients, and the instruments that make storage cost visible
// (CallCounter) and testable (Faults). It must never hold a resource name or
// an endpoint in code that the environment cannot override.
package awsenv

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
)

// Retry and timeout bounds. A Lambda behind API Gateway has 30 seconds; a
// storage call that needs more than a few attempts is better answered with
// 503 and Retry-After than retried into the gateway's timeout.
const (
	maxAttempts        = 3
	maxBackoff         = time.Second
	defaultCallTimeout = 10 * time.Second
)

// Env is the AWS configuration of one process. Build it once, at start-up,
// and share it: SDK clients are safe for concurrent use.
type Env struct {
	Config aws.Config
	Names  Names
	// Calls counts every SDK round trip made through Config.
	Calls *CallCounter
	// pathStyle is set against an emulator, whose loopback endpoint cannot
	// serve virtual-hosted bucket names.
	pathStyle bool
}

type settings struct {
	callTimeout time.Duration
	apiOptions  []func(*middleware.Stack) error
}

// Option configures New.
type Option func(*settings)

// WithCallTimeout bounds each SDK call (all its attempts) in addition to
// whatever deadline the caller's context carries; the earlier one wins.
func WithCallTimeout(d time.Duration) Option { return func(s *settings) { s.callTimeout = d } }

// WithAPIOptions adds SDK middleware, such as a Faults injector in tests.
func WithAPIOptions(fns ...func(*middleware.Stack) error) Option {
	return func(s *settings) { s.apiOptions = append(s.apiOptions, fns...) }
}

// New loads the standard AWS configuration (credentials chain, AWS_REGION,
// AWS_ENDPOINT_URL, which the SDK honours natively) and the resource names.
func New(ctx context.Context, opts ...Option) (*Env, error) {
	st := settings{callTimeout: defaultCallTimeout}
	for _, o := range opts {
		o(&st)
	}
	calls := NewCallCounter()
	apiOptions := append([]func(*middleware.Stack) error{calls.APIOption(), callTimeout(st.callTimeout)}, st.apiOptions...)
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = maxAttempts
				o.MaxBackoff = maxBackoff
			})
		}),
		config.WithAPIOptions(apiOptions),
		// We hash objects ourselves (see s3blob); validating S3's optional
		// response checksums as well would only log noise where there are none.
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	)
	if err != nil {
		return nil, fmt.Errorf("awsenv: load AWS config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return &Env{
		Config:    cfg,
		Names:     NamesFromEnv(),
		Calls:     calls,
		pathStyle: os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != "",
	}, nil
}

func (e *Env) DynamoDB() *dynamodb.Client { return dynamodb.NewFromConfig(e.Config) }
func (e *Env) SQS() *sqs.Client           { return sqs.NewFromConfig(e.Config) }
func (e *Env) KMS() *kms.Client           { return kms.NewFromConfig(e.Config) }

func (e *Env) S3() *s3.Client {
	return s3.NewFromConfig(e.Config, func(o *s3.Options) { o.UsePathStyle = e.pathStyle })
}

// untimed operations outlive their call: S3 streams a GetObject body after
// the call returns, and SQS holds a long poll open for up to 20 seconds.
// The caller's context alone bounds them.
var untimed = map[string]bool{"S3.GetObject": true, "SQS.ReceiveMessage": true}

// callTimeout gives every other operation a deadline, so a hung connection
// costs a bounded part of the request's budget rather than all of it.
func callTimeout(d time.Duration) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("awsenvCallTimeout",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if untimed[opName(ctx)] {
					return next.HandleInitialize(ctx, in)
				}
				ctx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	}
}
