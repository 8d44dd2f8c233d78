// Package lambdaedge runs one endpoint group, or one queue worker, as an AWS
// Lambda function: API Gateway HTTP API events (payload format 2.0) or SQS
// batches in, the group's kernel or the worker behind them. It builds what
// every function shares (the AWS clients, the table, the webhook publisher,
// the kernel); each functions/<name>/main.go adds its own adapters and
// registers its group, so a function links only what it serves. It must
// never keep request state between invocations; the only thing it holds
// across them is what was built at cold start.
package lambdaedge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"platformapi/shared/api"
	"platformapi/shared/audit"
	"platformapi/shared/awsenv"
	"platformapi/shared/envelope/kmsenvelope"
	"platformapi/shared/queue"
	"platformapi/shared/queue/sqsqueue"
	"platformapi/shared/routes"
	"platformapi/shared/store/dynamostore"
	"platformapi/shared/webhooks"
)

// RequestTimeout is every HTTP function's request deadline: under the HTTP
// API's 30-second integration limit.
const RequestTimeout = 28 * time.Second

// Env is what a function builds from its environment at cold start.
type Env struct {
	AWS    *awsenv.Env
	Logger *slog.Logger
	// Kernel is the kernel's configuration (the table, the logger, the
	// webhook publisher, and the envelope key where the function is
	// granted it); a group's setup may add to it, e.g. the keys function's
	// credit-token signer.
	Kernel api.Config
	// Webhooks is the webhook queue, when the function was granted it.
	Webhooks queue.Queue
}

// Queue connects a queue the function was granted: CDK passes its URL, so
// cold start makes no lookup call. Outside Lambda (LocalStack, moto) the URL
// is looked up by name.
func (e *Env) Queue(ctx context.Context, q awsenv.Queue) (queue.Queue, error) {
	if q.URL == "" && inLambda() {
		return nil, nil
	}
	url, err := e.AWS.QueueURL(ctx, q)
	if err != nil {
		return nil, err
	}
	return sqsqueue.New(e.AWS.SQS(), url), nil
}

// Setup builds a group's own adapters from the environment and returns
// the registration of its operations.
type Setup func(ctx context.Context, e *Env) (register func(*api.Kernel), err error)

// Serve turns the process into the Lambda function of one endpoint group
// and never returns.
//
// Everything is built once, in the init phase, because Lambda reuses a warm
// process for many invocations and bills and delays only the first. The
// clients are never closed: Lambda freezes and then kills the process
// without warning, and the storage is safe against that.
//
// A startup failure is fatal. It is logged as one JSON line (the whole
// CloudWatch record of the failed init), reported to the Runtime API as an
// init error so that Lambda names the cause rather than a bare exit status,
// and the process exits non-zero; Lambda then retries init on the next
// event instead of serving from a half-built process.
func Serve(group string, setup Setup) {
	logger := newLogger(group)
	k, err := build(context.Background(), logger, group, setup)
	if err != nil {
		fail(logger, err)
	}
	lambda.Start(httpadapter.NewV2(k.Handler()).ProxyWithContext)
}

// build makes the kernel of one group. A group outside the route table is
// refused before anything is opened, so a misspelt main fails at deploy
// time instead of answering 404 to every request.
func build(ctx context.Context, logger *slog.Logger, group string, setup Setup) (*api.Kernel, error) {
	if len(routes.OfGroup(group)) == 0 {
		return nil, fmt.Errorf("lambdaedge: unknown endpoint group %q", group)
	}
	e, err := newEnv(ctx, logger)
	if err != nil {
		return nil, err
	}
	e.Kernel.Groups, e.Kernel.RequestTimeout = []string{group}, RequestTimeout
	e.Kernel.ClientIP = SourceIP
	// Every request's audit event is one Put; the table's stream carries it
	// to the audit-rollup function.
	e.Kernel.Audit = audit.NewRecorder(e.Kernel.Store, nil)
	if e.Webhooks != nil {
		e.Kernel.Events = webhooks.NewRepo(webhooks.Config{Store: e.Kernel.Store, Queue: e.Webhooks})
	}
	register, err := setup(ctx, e)
	if err != nil {
		return nil, err
	}
	k := api.New(e.Kernel)
	register(k)
	return k, nil
}

func newEnv(ctx context.Context, logger *slog.Logger) (*Env, error) {
	aws, err := awsenv.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("lambdaedge: aws config: %w", err)
	}
	e := &Env{AWS: aws, Logger: logger}
	e.Kernel = api.Config{Store: dynamostore.New(aws.DynamoDB(), aws.Names.Table), Logger: logger}
	// A function granted the envelope key seals the secrets it answers
	// (keys, webhooks); the grant comes with KMS_KEY_ID.
	if os.Getenv("KMS_KEY_ID") != "" {
		e.Kernel.Sealer = kmsenvelope.New(aws.KMS(), aws.Names.KMSKeyID)
	}
	if e.Webhooks, err = e.Queue(ctx, aws.Names.WebhookQueue); err != nil {
		return nil, fmt.Errorf("lambdaedge: webhook queue: %w", err)
	}
	return e, nil
}

// Batcher handles a batch and returns the ids of the messages to leave in
// the queue; *webhooks.Worker and *runs.Worker are.
type Batcher interface {
	HandleBatch(ctx context.Context, ms []queue.Received) []string
}

// ServeWorker turns the process into the Lambda function of a queue worker,
// built once at cold start, and never returns. A startup failure is
// handled as in Serve.
func ServeWorker(name string, worker func(ctx context.Context, e *Env) (Batcher, error)) {
	ServeHandler(name, func(ctx context.Context, e *Env) (any, error) {
		b, err := worker(ctx, e)
		if err != nil {
			return nil, err
		}
		return QueueHandler(b), nil
	})
}

// ServeScheduled turns the process into a function an EventBridge schedule
// invokes: each event runs pass once. A failed pass fails the invocation,
// which the function's error alarm shows; the next one retries.
func ServeScheduled(name string, setup func(ctx context.Context, e *Env) (pass func(context.Context) error, err error)) {
	ServeHandler(name, func(ctx context.Context, e *Env) (any, error) {
		pass, err := setup(ctx, e)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, _ events.EventBridgeEvent) error {
			if err := pass(ctx); err != nil {
				e.Logger.Error("scheduled pass failed", slog.String("error", err.Error()))
				return err
			}
			return nil
		}, nil
	})
}

// ServeHandler turns the process into a function whose aws-lambda-go
// handler setup builds once, at cold start, from the shared environment (a
// DynamoDB Streams consumer, for one). A startup failure is handled as in
// Serve.
func ServeHandler(name string, setup func(ctx context.Context, e *Env) (handler any, err error)) {
	logger := newLogger(name)
	ctx := context.Background()
	e, err := newEnv(ctx, logger)
	var handler any
	if err == nil {
		handler, err = setup(ctx, e)
	}
	if err != nil {
		fail(logger, err)
	}
	lambda.Start(handler)
}

func newLogger(function string) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(os.Getenv("LOG_LEVEL"))))
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With(slog.String("function", function))
}

func fail(logger *slog.Logger, err error) {
	logger.Error("startup failed", slog.String("error", err.Error()))
	reportInitError(err)
	os.Exit(1)
}

// SourceIP is the client address API Gateway saw (the HTTP API's request
// context, which httpadapter.NewV2 puts in the request's context): behind
// API Gateway the socket is API Gateway's, and X-Forwarded-For is written
// by the client. Without a context (or with a malformed address) it is the
// zero Addr, which no key's allowedIps admits.
func SourceIP(r *http.Request) netip.Addr {
	c, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok {
		return netip.Addr{}
	}
	a, _ := netip.ParseAddr(c.HTTP.SourceIP)
	return a.Unmap()
}

// inLambda reports whether the process runs on Lambda.
func inLambda() bool { return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" }
