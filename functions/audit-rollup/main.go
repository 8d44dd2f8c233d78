// Command audit-rollup counts audit events into the hourly usage counters
// off the request path: it is triggered by the table's DynamoDB stream
// (inserts of audit events only, filtered by the event source mapping) and
// answers with a partial batch response, so Lambda retries a batch from the
// first event not yet counted. Counting is exactly once however often a
// record is delivered (see audit.Rollup); after its retries a batch's
// position goes to the dead-letter queue, whose depth raises an alarm.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/auditstream"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeHandler("audit-rollup", func(ctx context.Context, e *lambdaedge.Env) (any, error) {
		rollup := audit.NewRollup(e.Store)
		return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			return auditstream.Handle(ctx, rollup, ev), nil
		}, nil
	})
}
