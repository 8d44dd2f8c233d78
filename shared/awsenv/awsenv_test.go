package awsenv_test

import (
	"errors"
	"testing"

	"platformapi/shared/awsenv"
	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/store"
	"platformapi/shared/store/dynamostore"
)

func TestNamesHaveLocalDefaultsAndFollowTheEnvironment(t *testing.T) {
	for _, v := range []string{"TABLE_NAME", "FILES_BUCKET", "ARCHIVES_BUCKET", "ARTIFACTS_BUCKET",
		"WEBHOOK_QUEUE_URL", "WEBHOOK_QUEUE_NAME", "RUNS_QUEUE_URL", "RUNS_QUEUE_NAME", "DATABASES_QUEUE_URL", "DATABASES_QUEUE_NAME",
		"WALLETS_QUEUE_URL", "WALLETS_QUEUE_NAME", "KMS_KEY_ID"} {
		t.Setenv(v, "")
	}
	want := awsenv.Names{
		Table: "platform-api", FilesBucket: "platform-api-files", ArchivesBucket: "platform-api-archives",
		ArtifactsBucket: "platform-api-artifacts", WebhookQueue: awsenv.Queue{Name: "platform-api-webhooks"},
		RunsQueue: awsenv.Queue{Name: "platform-api-runs"}, DatabasesQueue: awsenv.Queue{Name: "platform-api-databases"},
		WalletsQueue: awsenv.Queue{Name: "platform-api-wallets"}, KMSKeyID: "alias/platform-api",
	}
	if got := awsenv.NamesFromEnv(); got != want {
		t.Fatalf("defaults = %+v; want %+v", got, want)
	}
	t.Setenv("TABLE_NAME", "prod-table")
	t.Setenv("RUNS_QUEUE_URL", "https://sqs.example/123/runs")
	t.Setenv("KMS_KEY_ID", "arn:aws:kms:eu-west-1:123:key/abc")
	got := awsenv.NamesFromEnv()
	if got.Table != "prod-table" || got.RunsQueue.URL != "https://sqs.example/123/runs" || got.KMSKeyID != "arn:aws:kms:eu-west-1:123:key/abc" {
		t.Fatalf("overrides = %+v", got)
	}
}

// TestCallCounterCountsEveryAttempt proves retries are counted: they are
// round trips, and billed.
func TestCallCounterCountsEveryAttempt(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	db, table := awstest.Table(t, env)
	s := dynamostore.New(db, table)
	ctx := awstest.Context(t)
	env.Calls.Reset()
	faults.Set("DynamoDB.GetItem", awsenv.Throttle)
	_, err := s.Get(ctx, store.Key{PK: "p", SK: "s"})
	faults.Clear()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err = %v; want ErrUnavailable", err)
	}
	if n := env.Calls.Snapshot()["DynamoDB.GetItem"]; n != 3 || faults.Hits("DynamoDB.GetItem") != 3 {
		t.Fatalf("counted %d GetItem round trips, injected %d; want 3 attempts", n, faults.Hits("DynamoDB.GetItem"))
	}
	env.Calls.Reset()
	if env.Calls.Total() != 0 {
		t.Fatal("Reset left counts behind")
	}
}
