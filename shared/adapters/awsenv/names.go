package awsenv

import (
	"os"

	"platformapi/shared/adapters/work"
)

// Names are the AWS resources the functions use. CDK passes the real names
// through these environment variables; the defaults serve LocalStack and moto.
type Names struct {
	Table           string // TABLE_NAME
	FilesBucket     string // FILES_BUCKET
	ArchivesBucket  string // ARCHIVES_BUCKET
	ArtifactsBucket string // ARTIFACTS_BUCKET
	// Queues are the queues package work declares (or those a test names,
	// QueueNames) and those provisioning created, by work.Queue.Name:
	// <Env>_QUEUE_URL / <Env>_QUEUE_NAME. Queue names any other declared
	// queue (a group's) from the same variables when asked.
	Queues   map[string]Queue
	KMSKeyID string // KMS_KEY_ID: a key id, ARN or alias
}

// Queue names a queue; URL wins when set (CDK knows it), otherwise the URL
// is looked up by Name.
type Queue struct {
	URL  string
	Name string
}

// Queue is the name of declared queue q: as Queues has it, else from its
// variables, by default platform-api-<name>. A group's queue thus needs no
// list here: its function is told its URL like any other.
func (n Names) Queue(q work.Queue) Queue {
	if named, ok := n.Queues[q.Name]; ok {
		return named
	}
	return Queue{URL: os.Getenv(QueueURLEnv(q)), Name: env(q.Env+"_QUEUE_NAME", "platform-api-"+q.Name)}
}

// NamesFromEnv reads the names, falling back to the local defaults.
func NamesFromEnv() Names {
	n := Names{
		Table:           env("TABLE_NAME", "platform-api"),
		FilesBucket:     env("FILES_BUCKET", "platform-api-files"),
		ArchivesBucket:  env("ARCHIVES_BUCKET", "platform-api-archives"),
		ArtifactsBucket: env("ARTIFACTS_BUCKET", "platform-api-artifacts"),
		Queues:          QueueNames("platform-api", work.Queues),
		KMSKeyID:        env("KMS_KEY_ID", "alias/platform-api"),
	}
	for _, q := range work.Queues {
		n.Queues[q.Name] = Queue{URL: os.Getenv(QueueURLEnv(q)), Name: env(q.Env+"_QUEUE_NAME", n.Queues[q.Name].Name)}
	}
	return n
}

// QueueNames names each of queues prefix-<name>, with no URL: a test's own
// set of queues (the deployment's, platform.Queues), which provisioning
// creates.
func QueueNames(prefix string, queues []work.Queue) map[string]Queue {
	out := make(map[string]Queue, len(queues))
	for _, q := range queues {
		out[q.Name] = Queue{Name: prefix + "-" + q.Name}
	}
	return out
}

// QueueURLEnv is the variable that passes declared queue q's URL.
func QueueURLEnv(q work.Queue) string { return q.Env + "_QUEUE_URL" }

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
