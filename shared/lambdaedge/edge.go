// Package lambdaedge runs one queue worker, one scheduled pass or one
// stream consumer as an AWS Lambda function, and builds what every function
// shares: the AWS clients, the table, the envelope key where granted and the
// webhook queue. It links neither the HTTP kernel nor huma, so that a worker
// carries none of the API's weight; the endpoint groups are served by its
// subpackage httpedge, which adds the kernel on top of the same Env. Each
// functions/<name>/main.go adds its own adapters, so a function links only
// what it serves. It must never keep request state between invocations; the
// only thing it holds across them is what was built at cold start.
package lambdaedge

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/kmsenvelope"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/sqsqueue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/groups/services/superbrain"
	"platformapi/shared/groups/webhooks"
)

// Env is what a function builds from its environment at cold start.
type Env struct {
	AWS    *awsenv.Env
	Logger *slog.Logger
	// Store is the table.
	Store store.Store
	// Sealer is the envelope key, when the function was granted it (the
	// grant comes with KMS_KEY_ID); nil otherwise.
	Sealer envelope.Sealer
	// Webhooks is the webhook queue, when the function was granted it, and
	// Events the webhook publisher on it (nil without it).
	Webhooks queue.Queue
	Events   ports.Publisher
	// Services are the managed services built into the deployment,
	// reached in process on the table.
	Services upstream.Router
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

// NewEnv builds the shared environment of a function. Everything is built
// once, in the init phase, because Lambda reuses a warm process for many
// invocations and bills and delays only the first. The clients are never
// closed: Lambda freezes and then kills the process without warning, and
// the storage is safe against that.
func NewEnv(ctx context.Context, logger *slog.Logger) (*Env, error) {
	aws, err := awsenv.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("lambdaedge: aws config: %w", err)
	}
	st := dynamostore.New(aws.DynamoDB(), aws.Names.Table)
	e := &Env{AWS: aws, Logger: logger, Store: st, Services: superbrain.Router(st, time.Now)}
	if os.Getenv("KMS_KEY_ID") != "" {
		e.Sealer = kmsenvelope.New(aws.KMS(), aws.Names.KMSKeyID)
	}
	if e.Webhooks, err = e.Queue(ctx, aws.Names.Queue(work.Webhooks)); err != nil {
		return nil, fmt.Errorf("lambdaedge: webhook queue: %w", err)
	}
	if e.Webhooks != nil {
		e.Events = webhooks.NewRepo(webhooks.Config{Store: st, Queue: e.Webhooks})
	}
	return e, nil
}

// ServeWorker turns the process into the Lambda function of a queue worker,
// built once at cold start, and never returns: the event source mapping
// hands it the batches the local process's work.Run receives itself. A
// startup failure is handled as in ServeHandler.
func ServeWorker(name string, worker func(ctx context.Context, e *Env) (work.Worker, error)) {
	ServeHandler(name, func(ctx context.Context, e *Env) (any, error) {
		w, err := worker(ctx, e)
		if err != nil {
			return nil, err
		}
		return QueueHandler(w.Handle), nil
	})
}

// ServeScheduled turns the process into a function an EventBridge schedule
// (work.Schedule) invokes: each event runs pass once, the pass the local
// process's work.Run runs on a ticker. A failed pass fails the invocation,
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
// DynamoDB Streams consumer, for one), and never returns. A startup failure
// is fatal (see Fail).
func ServeHandler(name string, setup func(ctx context.Context, e *Env) (handler any, err error)) {
	logger := NewLogger(name)
	ctx := context.Background()
	e, err := NewEnv(ctx, logger)
	var handler any
	if err == nil {
		handler, err = setup(ctx, e)
	}
	if err != nil {
		Fail(logger, err)
	}
	lambda.Start(handler)
}

// NewLogger is a function's JSON logger at LOG_LEVEL, every line naming the
// function.
func NewLogger(function string) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(os.Getenv("LOG_LEVEL"))))
	return slog.New(jsonlog.New(os.Stderr, level)).With(slog.String("function", function))
}

// Fail ends a process whose startup failed. The failure is logged as one
// JSON line (the whole CloudWatch record of the failed init), reported to
// the Runtime API as an init error so that Lambda names the cause rather
// than a bare exit status, and the process exits non-zero; Lambda then
// retries init on the next event instead of serving from a half-built
// process.
func Fail(logger *slog.Logger, err error) {
	logger.Error("startup failed", slog.String("error", err.Error()))
	reportInitError(err)
	os.Exit(1)
}

// inLambda reports whether the process runs on Lambda.
func inLambda() bool { return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" }
