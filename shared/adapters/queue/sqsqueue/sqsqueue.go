// Package sqsqueue is the SQS adapter of the queue port. Redrive to a
// dead-letter queue is SQS's own (a redrive policy set by CDK or by
// CreateQueue), so the adapter only sends, receives, acknowledges and
// reschedules. It must never swallow a partial batch failure: a Send either
// queued every message or reports an error.
package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"platformapi/shared/adapters/queue"
)

var _ queue.Queue = (*Queue)(nil)

// Queue is a queue.Queue on one SQS queue. It is safe for concurrent use.
type Queue struct {
	sqs *sqs.Client
	url string
}

// New returns the queue at url (see CreateQueue, or awsenv for the URL of a
// named queue).
func New(client *sqs.Client, url string) *Queue { return &Queue{sqs: client, url: url} }

// Close does nothing: the SDK client belongs to the caller.
func (q *Queue) Close() error { return nil }

func (q *Queue) Send(ctx context.Context, msgs ...queue.Message) error {
	if err := queue.CheckBatch(msgs); err != nil {
		return err
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.SendMessageBatchRequestEntry{
			Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(m.Body)), DelaySeconds: seconds(m.Delay),
		}
	}
	out, err := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: entries})
	if err != nil {
		return classify("SendMessageBatch", err)
	}
	if len(out.Failed) == 0 {
		return nil
	}
	// The others were queued; a retry of the whole batch duplicates them,
	// which at-least-once consumers tolerate.
	f := out.Failed[0]
	err = fmt.Errorf("sqsqueue: %d of %d messages not sent, first %s: %s", len(out.Failed), len(msgs), aws.ToString(f.Code), aws.ToString(f.Message))
	if !f.SenderFault {
		return fmt.Errorf("%w: %w", queue.ErrUnavailable, err)
	}
	return err
}

// seconds rounds up to SQS's whole seconds, so nothing is shown early.
func seconds(d time.Duration) int32 {
	return int32(math.Ceil(d.Seconds()))
}

func (q *Queue) Receive(ctx context.Context, max int, visibility, wait time.Duration) ([]queue.Received, error) {
	if max < 1 || max > 10 {
		return nil, fmt.Errorf("sqsqueue: receive between 1 and 10 messages, not %d", max)
	}
	out, err := q.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: &q.url, MaxNumberOfMessages: int32(max),
		VisibilityTimeout: seconds(visibility), WaitTimeSeconds: seconds(min(wait, 20*time.Second)),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil {
		return nil, classify("ReceiveMessage", err)
	}
	got := make([]queue.Received, len(out.Messages))
	for i, m := range out.Messages {
		n, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
		got[i] = queue.Received{ID: aws.ToString(m.MessageId), Receipt: aws.ToString(m.ReceiptHandle), Body: []byte(aws.ToString(m.Body)), Attempts: n}
	}
	return got, nil
}

func (q *Queue) Delete(ctx context.Context, receipt string) error {
	_, err := q.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.url, ReceiptHandle: &receipt})
	if err != nil {
		return classify("DeleteMessage", err)
	}
	return nil
}

func (q *Queue) ChangeVisibility(ctx context.Context, receipt string, d time.Duration) error {
	if d < 0 || d > 12*time.Hour {
		return fmt.Errorf("sqsqueue: visibility %v outside 0 to 12h", d)
	}
	_, err := q.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &q.url, ReceiptHandle: &receipt, VisibilityTimeout: seconds(d),
	})
	if err != nil {
		// With the duration checked above, SQS's InvalidParameterValue here
		// can only be about the receipt ("message does not exist or is not
		// available for visibility timeout change").
		var api smithy.APIError
		if errors.As(err, &api) && strings.Contains(api.ErrorCode(), "InvalidParameterValue") {
			return fmt.Errorf("sqsqueue: ChangeMessageVisibility: %w: %w", queue.ErrInvalidReceipt, err)
		}
		return classify("ChangeMessageVisibility", err)
	}
	return nil
}
