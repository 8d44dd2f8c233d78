// Package auditstream adapts the table's DynamoDB stream to the audit
// rollup: it turns the stream's new images back into store items, keeps
// the inserted audit events and hands them to audit.Rollup. It is the only
// audit code that sees an AWS type, and it never writes anything itself.
package auditstream

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/audit"
)

// Item converts a stream image into the store item it was written as. The
// types are the ones dynamostore writes (S, N as int64, B, BOOL); anything
// else was not written through the store port and is refused.
func Item(img map[string]events.DynamoDBAttributeValue) (store.Item, error) {
	it := make(store.Item, len(img))
	for name, av := range img {
		switch av.DataType() {
		case events.DataTypeString:
			it[name] = av.String()
		case events.DataTypeNumber:
			n, err := strconv.ParseInt(av.Number(), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("auditstream: attribute %q: %w", name, err)
			}
			it[name] = n
		case events.DataTypeBinary:
			it[name] = av.Binary()
		case events.DataTypeBoolean:
			it[name] = av.Boolean()
		default:
			return nil, fmt.Errorf("auditstream: attribute %q has unsupported type %v", name, av.DataType())
		}
	}
	return it, nil
}

// Event is the audit event a stream record inserted; ok is false for every
// other record (modifications, removals by TTL, other items of the table).
func Event(rec events.DynamoDBEventRecord) (e audit.Event, ok bool, err error) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return audit.Event{}, false, nil
	}
	pk, found := rec.Change.NewImage[store.AttrPK]
	if !found || pk.DataType() != events.DataTypeString || !audit.IsEventPK(pk.String()) {
		return audit.Event{}, false, nil
	}
	it, err := Item(rec.Change.NewImage)
	if err != nil {
		return audit.Event{}, false, err
	}
	e, err = audit.DecodeItem(it)
	if err != nil {
		return audit.Event{}, false, err
	}
	return e, true, nil
}

// Handle rolls up one stream batch in order and reports the first record
// not counted: Lambda retries the batch from there (a stream is processed
// in order), and counting is idempotent, so a retried record that was
// counted after all is skipped. An audit record that cannot be decoded is
// reported too; after the event source mapping's retries it goes to the
// on-failure destination (the DLQ, with its alarm) instead of being dropped
// in silence.
func Handle(ctx context.Context, r *audit.Rollup, ev events.DynamoDBEvent) events.DynamoDBEventResponse {
	var evs []audit.Event
	var seqs []string
	failed := ""
	for _, rec := range ev.Records {
		e, ok, err := Event(rec)
		if err != nil {
			slog.Error("auditstream: undecodable audit record", "eventID", rec.EventID, "err", err)
			failed = rec.Change.SequenceNumber
			break
		}
		if ok {
			evs = append(evs, e)
			seqs = append(seqs, rec.Change.SequenceNumber)
		}
	}
	if n, err := r.Apply(ctx, evs); err != nil {
		slog.Warn("auditstream: rollup failed; the batch is retried from the first uncounted record", "err", err, "counted", n)
		failed = seqs[n]
	}
	if failed == "" {
		return events.DynamoDBEventResponse{}
	}
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: failed}}}
}
