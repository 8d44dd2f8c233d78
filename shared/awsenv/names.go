package awsenv

import "os"

// Names are the AWS resources the functions use. CDK passes the real names
// through these environment variables; the defaults serve LocalStack and moto.
type Names struct {
	Table           string // TABLE_NAME
	FilesBucket     string // FILES_BUCKET
	ArchivesBucket  string // ARCHIVES_BUCKET
	ArtifactsBucket string // ARTIFACTS_BUCKET
	WebhookQueue    Queue  // WEBHOOK_QUEUE_URL / WEBHOOK_QUEUE_NAME
	RunsQueue       Queue  // RUNS_QUEUE_URL / RUNS_QUEUE_NAME
	DatabasesQueue  Queue  // DATABASES_QUEUE_URL / DATABASES_QUEUE_NAME: database transfer jobs
	WalletsQueue    Queue  // WALLETS_QUEUE_URL / WALLETS_QUEUE_NAME: wallet transactions to sign, broadcast and confirm
	KMSKeyID        string // KMS_KEY_ID: a key id, ARN or alias
}

// Queue names a queue; URL wins when set (CDK knows it), otherwise the URL
// is looked up by Name.
type Queue struct {
	URL  string
	Name string
}

// NamesFromEnv reads the names, falling back to the local defaults.
func NamesFromEnv() Names {
	return Names{
		Table:           env("TABLE_NAME", "platform-api"),
		FilesBucket:     env("FILES_BUCKET", "platform-api-files"),
		ArchivesBucket:  env("ARCHIVES_BUCKET", "platform-api-archives"),
		ArtifactsBucket: env("ARTIFACTS_BUCKET", "platform-api-artifacts"),
		WebhookQueue:    Queue{URL: os.Getenv("WEBHOOK_QUEUE_URL"), Name: env("WEBHOOK_QUEUE_NAME", "platform-api-webhooks")},
		RunsQueue:       Queue{URL: os.Getenv("RUNS_QUEUE_URL"), Name: env("RUNS_QUEUE_NAME", "platform-api-runs")},
		DatabasesQueue:  Queue{URL: os.Getenv("DATABASES_QUEUE_URL"), Name: env("DATABASES_QUEUE_NAME", "platform-api-databases")},
		WalletsQueue:    Queue{URL: os.Getenv("WALLETS_QUEUE_URL"), Name: env("WALLETS_QUEUE_NAME", "platform-api-wallets")},
		KMSKeyID:        env("KMS_KEY_ID", "alias/platform-api"),
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
