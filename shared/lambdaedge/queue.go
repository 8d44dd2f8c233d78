package lambdaedge

// The queue side of the edge: an SQS batch becomes queue messages for a
// worker, and the worker's verdicts a partial batch response, so that a
// message that must be retried does not make Lambda redeliver the whole
// batch. The edge never deletes messages itself (Lambda deletes those not
// reported as failures).

import (
	"context"
	"log/slog"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"platformapi/shared/app"
	"platformapi/shared/queue"
)

// Batcher handles a batch and returns the ids of the messages to leave in
// the queue; *webhooks.Worker and *runs.Worker are.
type Batcher interface {
	HandleBatch(ctx context.Context, ms []queue.Received) []string
}

// Handler is the Lambda handler of an SQS event source mapping with
// ReportBatchItemFailures.
func QueueHandler(b Batcher) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		ms := make([]queue.Received, len(ev.Records))
		for i, r := range ev.Records {
			n, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
			ms[i] = queue.Received{ID: r.MessageId, Receipt: r.ReceiptHandle, Body: []byte(r.Body), Attempts: n}
		}
		resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		for _, id := range b.HandleBatch(ctx, ms) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
		return resp, nil
	}
}

// ServeWorker turns the process into the Lambda function of a queue worker,
// built once at cold start from the runtime, and never returns. A startup
// failure is handled as in Serve.
func ServeWorker(name string, worker func(*app.Runtime, *slog.Logger) (Batcher, error)) {
	cfg := app.ConfigFromEnv()
	logger := cfg.Logger().With(slog.String("function", name))
	rt, err := app.Open(context.Background(), cfg)
	var b Batcher
	if err == nil {
		b, err = worker(rt, logger)
	}
	if err != nil {
		logger.Error("startup failed", slog.String("error", err.Error()))
		reportInitError(err)
		os.Exit(1)
	}
	lambda.Start(QueueHandler(b))
}
