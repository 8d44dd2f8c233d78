// Package awsenv builds the AWS side of the process from its environment:
// one aws.Config with bounded retries and per-call timeouts, the resource
// names CDK hands to every function (with defaults for LocalStack and moto),
// the SDK clients, and the instruments that make storage cost visible
// (CallCounter) and testable (Faults). It must never hold a resource name or
// an endpoint in code that the environment cannot override.
//
// Its own configuration source is the one Lambda gives a function
// (Environment): it does not link the SDK's shared-config loader, whose SSO,
// STS, web-identity and instance-metadata credential providers are about
// 1.7 MB of every bootstrap that a function never uses. Processes that may
// run on a developer's profile (the local server, the tests) pass
// sharedconfig.Load instead (WithSource).
package awsenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/logging"
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

// CallTimeoutEnv names the variable that replaces the 10-second bound of
// one SDK call. Lambda keeps the default; an emulator that serves one
// request at a time to a whole test suite (moto under .ci/with-moto) can
// queue a call far longer than real AWS ever would, and every client of
// every test process must then wait alike rather than fail by chance.
const CallTimeoutEnv = "AWS_CALL_TIMEOUT"

// callTimeoutFromEnv is CallTimeoutEnv's duration, or def when it is unset.
func callTimeoutFromEnv(def time.Duration) (time.Duration, error) {
	v := os.Getenv(CallTimeoutEnv)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("awsenv: %s=%q: want a positive duration such as 60s", CallTimeoutEnv, v)
	}
	return d, nil
}

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
	source      Source
}

// Source makes the base configuration (credentials, region, endpoint) that
// New adds its retries, timeouts and counters to.
type Source func(ctx context.Context) (aws.Config, error)

// WithSource replaces Environment as the configuration source.
func WithSource(src Source) Option { return func(s *settings) { s.source = src } }

// Environment is the configuration Lambda gives a function: the credentials
// of its execution role in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, the region in AWS_REGION, and AWS_ENDPOINT_URL, which
// points every client at an emulator (LocalStack, moto) as the SDK's own
// loader would. Missing credentials fail the first call, not New, as with
// the SDK's loader.
func Environment(context.Context) (aws.Config, error) {
	cfg := aws.Config{
		Region: os.Getenv("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			c := aws.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
				SessionToken: os.Getenv("AWS_SESSION_TOKEN"), Source: "awsenv.Environment"}
			if c.AccessKeyID == "" || c.SecretAccessKey == "" {
				return aws.Credentials{}, errors.New("awsenv: no credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")
			}
			return c, nil
		})),
		// As the SDK's loader does: its warnings go to stderr.
		Logger: logging.NewStandardLogger(os.Stderr),
	}
	if cfg.Region == "" {
		cfg.Region = os.Getenv("AWS_DEFAULT_REGION")
	}
	if v := os.Getenv("AWS_ENDPOINT_URL"); v != "" {
		cfg.BaseEndpoint = &v
	}
	return cfg, nil
}

// Option configures New.
type Option func(*settings)

// WithCallTimeout bounds each SDK call (all its attempts) in addition to
// whatever deadline the caller's context carries; the earlier one wins. It
// takes precedence over CallTimeoutEnv.
func WithCallTimeout(d time.Duration) Option { return func(s *settings) { s.callTimeout = d } }

// WithAPIOptions adds SDK middleware, such as a Faults injector in tests.
func WithAPIOptions(fns ...func(*middleware.Stack) error) Option {
	return func(s *settings) { s.apiOptions = append(s.apiOptions, fns...) }
}

// New loads the AWS configuration from its Source (Environment unless
// WithSource says otherwise) and the resource names.
func New(ctx context.Context, opts ...Option) (*Env, error) {
	def, err := callTimeoutFromEnv(defaultCallTimeout)
	if err != nil {
		return nil, err
	}
	st := settings{callTimeout: def, source: Environment}
	for _, o := range opts {
		o(&st)
	}
	calls := NewCallCounter()
	apiOptions := append([]func(*middleware.Stack) error{calls.APIOption(), callTimeout(st.callTimeout)}, st.apiOptions...)
	cfg, err := st.source(ctx)
	if err != nil {
		return nil, fmt.Errorf("awsenv: load AWS config: %w", err)
	}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = maxAttempts
			o.MaxBackoff = maxBackoff
		})
	}
	cfg.APIOptions = append(cfg.APIOptions, apiOptions...)
	// We hash objects ourselves (see s3blob); validating S3's optional
	// response checksums as well would only log noise where there are none.
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
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

// DynamoDBStreams reads the table's stream where no event source mapping
// does (the local process on BACKEND=aws).
func (e *Env) DynamoDBStreams() *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(e.Config)
}
func (e *Env) SQS() *sqs.Client { return sqs.NewFromConfig(e.Config) }
func (e *Env) KMS() *kms.Client { return kms.NewFromConfig(e.Config) }

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
