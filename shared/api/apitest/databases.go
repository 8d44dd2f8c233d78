package apitest

import (
	"crypto/rand"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/awsenv"
	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/blob"
	"platformapi/shared/blob/fsblob"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/databases"
	"platformapi/shared/databases/archive"
	"platformapi/shared/databases/dbstore"
	"platformapi/shared/queue/memqueue"
	"platformapi/shared/store"
	"platformapi/shared/store/teststores"
	"platformapi/shared/webhooks"
)

// newDatabases builds the managed-databases service as the backend's
// deployment does: embedded files and a directory bucket, or (DynamoDB)
// the remote storage on the table and a fresh S3 bucket.
func newDatabases(t *testing.T, b teststores.Backend, st store.Store, now func() time.Time, maxBytes int64) (*databases.Service, *archive.Signer) {
	t.Helper()
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	signer, err := archive.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	var files dbstore.Storage
	var bucket blob.Bucket
	if b.Name == teststores.DynamoDB.Name {
		env := awstest.Env(t, awsenv.WithCallTimeout(time.Minute))
		client, name := awstest.Bucket(t, env)
		bucket = s3blob.New(client, name)
		files, err = dbstore.NewRemote(st, bucket, t.TempDir(), dbstore.WithMaxBytes(maxBytes), dbstore.WithClock(now))
	} else {
		bucket, err = fsblob.Open(t.TempDir())
		if err == nil {
			files, err = dbstore.NewEmbedded(filepath.Join(t.TempDir(), "databases"), maxBytes)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := files.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return databases.New(st, files, bucket, signer, t.TempDir(), now, databases.DefaultLimits), signer
}

// StartDatabasesWorker runs the databases worker loop, as functions/local
// does, until the test ends.
func (e *Env) StartDatabasesWorker() {
	e.startDBs.Do(func() {
		w := databases.NewWorker(databases.WorkerConfig{
			Service: e.Databases,
			Events:  webhooks.NewRepo(webhooks.Config{Store: e.Store, Queue: e.WebhookQueue, Now: e.Clock.Now}),
			Timeout: time.Minute, Logger: slog.New(slog.DiscardHandler),
		})
		e.run(w.Work(e.DatabasesQueue))
	})
}

func newDatabasesQueue(t *testing.T) *memqueue.Queue {
	q := memqueue.New()
	t.Cleanup(func() { q.Close() })
	return q
}
