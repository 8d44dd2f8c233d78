// Package dbtest serves managed databases in apitest servers. It is its
// own package so that only the tests that reach databases link SQLite.
package dbtest

import (
	"crypto/rand"
	"path/filepath"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/api"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/archive"
	"platformapi/shared/groups/databases/databasesapi"
	"platformapi/shared/groups/databases/dbstore"
	"platformapi/shared/groups/public/publicapi"
	"platformapi/shared/harness/apitest"
)

// On serves managed databases on the server's backend, their files capped
// at maxBytes (0: 1 MiB), and publishes the archive key in /health.
func On(maxBytes int64) apitest.Part {
	if maxBytes == 0 {
		maxBytes = 1 << 20
	}
	return func(t *testing.T, b teststores.Backend, p ports.Ports) ([]api.NewGroup, []string) {
		svc, signer := newDatabases(t, b, p.Store, p.Now, maxBytes)
		return []api.NewGroup{databasesapi.On(svc), publicapi.On(signer.PublicKey())}, nil
	}
}

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
		env := awstest.Env(t)
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
