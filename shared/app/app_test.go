package app

import (
	"testing"

	"platformapi/shared/awsenv"
	"platformapi/shared/databases"
	"platformapi/shared/runs"
	"platformapi/shared/webhooks"
)

// A worker marks a message failed on its last attempt; the queue must move
// it to the dead-letter queue on that same receive, not earlier or later.
func TestQueueReceiveLimitsMatchTheWorkersAttempts(t *testing.T) {
	if awsenv.WebhookMaxReceives != webhooks.DefaultMaxAttempts {
		t.Errorf("webhook queue: %d receives, worker: %d attempts", awsenv.WebhookMaxReceives, webhooks.DefaultMaxAttempts)
	}
	if awsenv.RunsMaxReceives != runs.DefaultMaxAttempts {
		t.Errorf("runs queue: %d receives, worker: %d attempts", awsenv.RunsMaxReceives, runs.DefaultMaxAttempts)
	}
	if awsenv.DatabasesMaxReceives != databases.DefaultMaxAttempts {
		t.Errorf("databases queue: %d receives, worker: %d attempts", awsenv.DatabasesMaxReceives, databases.DefaultMaxAttempts)
	}
}
