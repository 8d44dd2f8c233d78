// Package auditlogs adapts a CloudWatch Logs subscription to the audit
// ingest: it unpacks a delivery (base64 of gzip of JSON), keeps the lines
// that hold a shipped event and hands them to audit.Ingest. It is the only
// audit code that sees this AWS type.
package auditlogs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/audit"
	"platformapi/shared/store"
)

// Handle stores the events of one delivery. CloudWatch Logs invokes the
// function asynchronously: an error makes Lambda retry the delivery, then
// send it to the function's dead-letter queue, and a retry stores nothing
// twice (audit.Ingest). A line that is not an event is logged and skipped:
// the filter pattern lets only events through, so it is a bug, not a loss
// a retry could mend.
func Handle(ctx context.Context, st store.Store, ev events.CloudwatchLogsEvent) error {
	data, err := ev.AWSLogs.Parse()
	if err != nil {
		return fmt.Errorf("auditlogs: %w", err)
	}
	if data.MessageType == "CONTROL_MESSAGE" {
		return nil
	}
	evs := make([]audit.Event, 0, len(data.LogEvents))
	shards := make([]int, 0, len(data.LogEvents))
	for _, le := range data.LogEvents {
		e, shard, ok := audit.Shipped(le.Message)
		if !ok {
			slog.Warn("auditlogs: a delivered line holds no audit event", "logGroup", data.LogGroup, "id", le.ID)
			continue
		}
		evs, shards = append(evs, e), append(shards, shard)
	}
	return audit.Ingest(ctx, st, evs, shards)
}
