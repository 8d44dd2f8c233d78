// Package lambdaworker runs the webhook worker as an SQS-triggered Lambda
// function: it turns an SQS batch into queue messages for the worker and the
// worker's verdicts into a partial batch response, so that a message whose
// delivery must be retried does not make Lambda redeliver the whole batch.
// It is the only webhook code that knows Lambda's event types; it must never
// delete messages itself (Lambda deletes those not reported as failures).
package lambdaworker

import (
	"context"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/queue"
)

// Batcher handles a batch and returns the ids of the messages to leave in
// the queue; *webhooks.Worker is one.
type Batcher interface {
	HandleBatch(ctx context.Context, ms []queue.Received) []string
}

// Handler is the Lambda handler of an SQS event source mapping with
// ReportBatchItemFailures.
func Handler(b Batcher) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
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
