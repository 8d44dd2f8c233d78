// Command audit-ingest stores the audit events the API functions ship in
// their logs: a CloudWatch Logs subscription filter on each API function's
// log group (audit.ShipFilterPattern) delivers the access lines that carry
// an event (audit.Fold); each event's account and ancestors come from its
// key's record, read once per key and instance; and each event's item is put on the condition that it is new, so a redelivery
// stores nothing twice. The table's stream then counts the event
// (audit-rollup). A delivery that still fails after Lambda's retries goes
// to the dead-letter queue, whose depth raises an alarm.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/lambdaedge"
	"platformapi/shared/lambdaedge/auditlogs"
)

func main() {
	lambdaedge.ServeHandler("audit-ingest", func(ctx context.Context, e *lambdaedge.Env) (any, error) {
		in := auditlogs.New(e.Store)
		return func(ctx context.Context, ev events.CloudwatchLogsEvent) error {
			return in.Handle(ctx, ev)
		}, nil
	})
}
