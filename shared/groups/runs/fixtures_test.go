package runs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/base/ids"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/runs"
	"platformapi/shared/lambdaedge"
)

// The SQS fixtures of events/ are what the run worker Lambda receives; the
// duplicate one carries the same run twice in one batch, as at-least-once
// delivery may. Their run ids are replaced by a real run's.
func TestSQSRunEventsExecuteTheRunOnceThroughTheLambdaHandler(t *testing.T) {
	for _, tc := range []struct {
		file    string
		records int
	}{{"run-batch.json", 1}, {"run-duplicate.json", 2}} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "sqs", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			eachBackend(t, func(t *testing.T, h *harness) {
				var ev events.SQSEvent
				if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Records) != tc.records {
					t.Fatalf("%s: %d records, %v", tc.file, len(ev.Records), err)
				}
				k := h.account(1, keys.CreateKeyRequest{})
				run := h.search(k, "anything")
				real, _ := json.Marshal(runs.Message{AccountID: k.AccountID, RunID: run.ID})
				for i, r := range ev.Records {
					var m runs.Message
					if err := json.Unmarshal([]byte(r.Body), &m); err != nil || !ids.Valid("acct", m.AccountID) || !ids.Valid("run", m.RunID) {
						t.Fatalf("record %d body %s is not a run message", i, r.Body)
					}
					ev.Records[i].Body = string(real)
				}
				// A duplicate handled while its twin runs may be left in the
				// queue (reported as failed, to come back and be dropped); the
				// run itself executes once either way.
				resp, err := lambdaedge.QueueHandler(h.worker.HandleBatch)(h.ctx, ev)
				if err != nil || len(resp.BatchItemFailures) > tc.records-1 {
					t.Fatalf("response %+v, %v", resp, err)
				}
				if got := h.get(k, run.ID); got.Status != runs.StatusSucceeded || h.svc.executions() != 1 {
					t.Fatalf("status %s, executions %d", got.Status, h.svc.executions())
				}
			})
		})
	}
}
