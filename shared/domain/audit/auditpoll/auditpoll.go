// Package auditpoll reads the table's DynamoDB stream for a process that
// has no event source mapping: the local server on BACKEND=aws (moto,
// LocalStack, or a real table). On AWS the audit-rollup function gets the
// same records from Lambda; here a pass reads each shard from its start and
// hands the records to the same adapter (auditstream), so /usage rolls up
// the same way. Reading from the start after a restart counts nothing
// twice: the rollup skips every event it has a marker for.
package auditpoll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"platformapi/shared/adapters/work"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/auditstream"
)

// Name is the pass's name in the local process's log.
const Name = "audit-stream"

// batchLimit is the most records one read returns, as the rollup
// function's event source mapping batches them.
const batchLimit = 1000

// Poller holds where it has read each shard up to. It is used by one pass
// at a time.
type Poller struct {
	table   *dynamodb.Client
	streams *dynamodbstreams.Client
	name    string
	rollup  *audit.Rollup
	log     *slog.Logger

	arn string
	// next is each open shard's iterator; a shard read to its end is
	// kept with "" so that it is not read again.
	next map[string]string
	// warned: a table without a stream is said once, not every tick.
	warned bool
}

// New reads the stream of the named table into the rollup.
func New(table *dynamodb.Client, streams *dynamodbstreams.Client, name string, rollup *audit.Rollup, log *slog.Logger) *Poller {
	return &Poller{table: table, streams: streams, name: name, rollup: rollup, log: log, next: map[string]string{}}
}

// Pass runs the poller every interval.
func (p *Poller) Pass(every time.Duration) work.Pass {
	return work.Pass{Name: Name, Every: every, Run: p.Step}
}

// errNoStream: the table was created without its stream (by an older
// --create-resources, or by hand); the rollup cannot see its events.
var errNoStream = errors.New("the table has no stream; create it with --create-resources or enable NEW_IMAGE on it")

// Step reads every shard up to its current end and rolls up what it read.
// A batch the rollup could not count whole is read again from its first
// uncounted record at the next step.
func (p *Poller) Step(ctx context.Context) error {
	if p.arn == "" {
		arn, err := p.streamARN(ctx)
		if errors.Is(err, errNoStream) {
			if !p.warned {
				p.warned = true
				p.log.Warn("auditpoll: usage does not roll up", "table", p.name, "reason", err.Error())
			}
			return nil
		}
		if err != nil {
			return err
		}
		p.arn = arn
	}
	if err := p.discover(ctx); err != nil {
		return err
	}
	for shard, it := range p.next {
		if it == "" {
			continue
		}
		if err := p.drain(ctx, shard, it); err != nil {
			return err
		}
	}
	return nil
}

func (p *Poller) streamARN(ctx context.Context) (string, error) {
	out, err := p.table.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.name})
	if err != nil {
		return "", fmt.Errorf("auditpoll: describe table %s: %w", p.name, err)
	}
	if out.Table.LatestStreamArn == nil {
		return "", errNoStream
	}
	return *out.Table.LatestStreamArn, nil
}

// discover starts every shard it has not seen at its oldest record.
func (p *Poller) discover(ctx context.Context) error {
	var start *string
	for {
		out, err := p.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &p.arn, ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("auditpoll: describe stream: %w", err)
		}
		for _, sh := range out.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			if _, seen := p.next[id]; seen {
				continue
			}
			it, err := p.iterator(ctx, id, types.ShardIteratorTypeTrimHorizon, nil)
			if err != nil {
				return err
			}
			p.next[id] = it
		}
		start = out.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return nil
		}
	}
}

func (p *Poller) iterator(ctx context.Context, shard string, kind types.ShardIteratorType, seq *string) (string, error) {
	out, err := p.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: &p.arn, ShardId: &shard, ShardIteratorType: kind, SequenceNumber: seq,
	})
	if err != nil {
		return "", fmt.Errorf("auditpoll: shard %s iterator: %w", shard, err)
	}
	return aws.ToString(out.ShardIterator), nil
}

// drain reads one shard until a read returns nothing new. A closed shard's
// last read returns no next iterator; it is then done.
func (p *Poller) drain(ctx context.Context, shard, it string) error {
	for it != "" {
		out, err := p.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: &it, Limit: aws.Int32(batchLimit)})
		var expired *types.ExpiredIteratorException
		if errors.As(err, &expired) {
			// The next step starts the shard again from its oldest record.
			delete(p.next, shard)
			return nil
		}
		if err != nil {
			return fmt.Errorf("auditpoll: read shard %s: %w", shard, err)
		}
		next := aws.ToString(out.NextShardIterator)
		if len(out.Records) > 0 {
			ev, err := lambdaEvent(out.Records)
			if err != nil {
				return err
			}
			if failed := auditstream.Handle(ctx, p.rollup, ev).BatchItemFailures; len(failed) > 0 {
				retry, err := p.iterator(ctx, shard, types.ShardIteratorTypeAtSequenceNumber, &failed[0].ItemIdentifier)
				if err != nil {
					return err
				}
				p.next[shard] = retry
				return fmt.Errorf("auditpoll: shard %s: the rollup did not count its batch whole; read again from %s", shard, failed[0].ItemIdentifier)
			}
		}
		p.next[shard] = next
		if len(out.Records) == 0 {
			return nil
		}
		it = next
	}
	return nil
}

// lambdaEvent is the batch as Lambda delivers it to the rollup function.
func lambdaEvent(recs []types.Record) (events.DynamoDBEvent, error) {
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, len(recs))}
	for i, r := range recs {
		out := events.DynamoDBEventRecord{EventID: aws.ToString(r.EventID), EventName: string(r.EventName)}
		if c := r.Dynamodb; c != nil {
			img, err := image(c.NewImage)
			if err != nil {
				return events.DynamoDBEvent{}, err
			}
			out.Change = events.DynamoDBStreamRecord{NewImage: img, SequenceNumber: aws.ToString(c.SequenceNumber)}
		}
		ev.Records[i] = out
	}
	return ev, nil
}

func image(m map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		av, err := attribute(v)
		if err != nil {
			return nil, fmt.Errorf("auditpoll: attribute %q: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func attribute(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			av, err := attribute(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			l[i] = av
		}
		return events.NewListAttribute(l), nil
	case *types.AttributeValueMemberM:
		m, err := image(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	default:
		return events.DynamoDBAttributeValue{}, fmt.Errorf("unsupported type %T", v)
	}
}
