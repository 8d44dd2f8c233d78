package lambdatest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The worker binaries start as Lambda functions and answer an SQS batch
// with a partial batch response. Messages naming deliveries or runs that do
// not exist (nothing was ever published in this fresh store) are consumed,
// not retried: there is nothing a retry could deliver.
func TestWorkersAnswerSQSBatchesWithPartialBatchResponses(t *testing.T) {
	for worker, fixture := range map[string]string{
		"webhook-worker": "webhook-batch.json", "run-worker": "run-batch.json",
		// A message no wallet transaction can come of is consumed.
		"wallets-worker": "wallets-malformed.json",
	} {
		t.Run(worker, func(t *testing.T) {
			fn := start(t, worker, backends[0].env(t))
			raw, err := os.ReadFile(filepath.Join(moduleRoot, "events", "sqs", fixture))
			if err != nil {
				t.Fatal(err)
			}
			out, err := fn.Invoke(context.Background(), raw)
			if err != nil {
				t.Fatalf("invoke: %v\n%s", err, fn.Logs())
			}
			var resp events.SQSEventResponse
			if err := json.Unmarshal(out, &resp); err != nil || resp.BatchItemFailures == nil {
				t.Fatalf("response %s is not a partial batch response (%v)", out, err)
			}
			if len(resp.BatchItemFailures) != 0 {
				t.Fatalf("unknown deliveries or runs were kept for retry: %s", out)
			}
		})
	}
}

// The scheduled passes start as Lambda functions, built through their
// group's constructor, and answer EventBridge's scheduled event; on a fresh
// store they have nothing to advance.
func TestScheduledPassesAnswerTheScheduledEvent(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(moduleRoot, "events", "eventbridge", "schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"wallets-recheck", "hold-sweeper", "trading-recheck"} {
		t.Run(pass, func(t *testing.T) {
			fn := start(t, pass, backends[0].env(t))
			if _, err := fn.Invoke(context.Background(), raw); err != nil {
				t.Fatalf("invoke: %v\n%s", err, fn.Logs())
			}
		})
	}
}
