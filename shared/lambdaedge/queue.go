package lambdaedge

// The queue side of the edge: an SQS batch becomes queue messages for a
// worker, and the worker's verdicts a partial batch response, so that a
// message that must be retried does not make Lambda redeliver the whole
// batch. The edge never deletes messages itself (Lambda deletes those not
// reported as failures).

import (
	"context"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/queue"
)

// QueueHandler is the Lambda handler of an SQS event source mapping with
// ReportBatchItemFailures.
// handle returns the ids of the messages to leave in the queue.
func QueueHandler(handle func(ctx context.Context, ms []queue.Received) []string) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		ms := make([]queue.Received, len(ev.Records))
		for i, r := range ev.Records {
			n, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
			ms[i] = queue.Received{ID: r.MessageId, Receipt: r.ReceiptHandle, Body: []byte(r.Body), Attempts: n}
		}
		resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		for _, id := range handle(ctx, ms) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
		return resp, nil
	}
}
