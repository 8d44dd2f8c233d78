package lambdaedge_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/lambdaedge"
)

// batcher records what it was given and fails the listed message ids.
type batcher struct {
	got  []queue.Received
	fail []string
}

func (b *batcher) HandleBatch(_ context.Context, ms []queue.Received) []string {
	b.got = ms
	return b.fail
}

func loadBatch(t *testing.T) events.SQSEvent {
	t.Helper()
	raw, err := os.ReadFile("../../events/sqs/webhook-batch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// Only the failed message is reported, so Lambda deletes the others and
// redelivers just that one after its backoff.
func TestOnlyFailedMessagesAreReportedAsBatchItemFailures(t *testing.T) {
	ev := loadBatch(t)
	b := &batcher{fail: []string{ev.Records[1].MessageId}}
	resp, err := lambdaedge.QueueHandler(b.HandleBatch)(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(resp)
	if want := `{"batchItemFailures":[{"itemIdentifier":"` + ev.Records[1].MessageId + `"}]}`; string(out) != want {
		t.Fatalf("response %s, want %s", out, want)
	}
}

// Each record becomes a queue message with its id, receipt (for the
// worker's visibility change), body and receive count.
func TestRecordsBecomeQueueMessages(t *testing.T) {
	ev := loadBatch(t)
	b := &batcher{}
	resp, err := lambdaedge.QueueHandler(b.HandleBatch)(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("response %+v %v", resp, err)
	}
	if len(b.got) != len(ev.Records) {
		t.Fatalf("%d messages for %d records", len(b.got), len(ev.Records))
	}
	attempts := make([]int, len(b.got))
	for i, m := range b.got {
		r := ev.Records[i]
		if m.ID != r.MessageId || m.Receipt != r.ReceiptHandle || string(m.Body) != r.Body {
			t.Fatalf("message %d: %+v from %+v", i, m, r)
		}
		attempts[i] = m.Attempts
	}
	if !slices.Equal(attempts, []int{1, 3, 1}) {
		t.Fatalf("attempts %v, want the ApproximateReceiveCounts", attempts)
	}
}
