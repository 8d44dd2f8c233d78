package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"platformapi/shared/adapters/awsenv/awstest"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/testclock"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/base/apierr"
)

type fixture struct {
	repo   *Repo
	st     store.Store
	bucket blob.Bucket
	clock  *testclock.Clock
}

func (f *fixture) withStore(st store.Store) *Repo {
	return NewRepo(Config{Store: st, Bucket: f.bucket, Now: f.clock.Now, Quota: f.repo.quota})
}

// backends pairs the embedded store with the embedded bucket, and DynamoDB
// with S3 on the emulator when make test runs one.
func eachBackend(t *testing.T, quota Quota, test func(t *testing.T, f *fixture)) {
	type backend struct {
		name string
		open func(t *testing.T, now func() time.Time) (store.Store, blob.Bucket)
	}
	all := []backend{{"embedded", func(t *testing.T, now func() time.Time) (store.Store, blob.Bucket) {
		b, err := fsblob.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return teststores.Embedded.Open(t, now), b
	}}}
	if os.Getenv("AWS_ENDPOINT_URL") != "" {
		all = append(all, backend{"aws", func(t *testing.T, now func() time.Time) (store.Store, blob.Bucket) {
			// A minute per call, as the test stores have: sixteen racing
			// uploads queue behind one emulator on a loaded machine.
			client, name := awstest.Bucket(t, awstest.Env(t))
			return teststores.DynamoDB.Open(t, now), s3blob.New(client, name)
		}})
	}
	for _, b := range all {
		t.Run(b.name, func(t *testing.T) {
			// The clock starts at the real time: the blob adapters stamp
			// objects with their own.
			c := testclock.New(time.Now().UTC())
			st, bucket := b.open(t, c.Now)
			test(t, &fixture{repo: NewRepo(Config{Store: st, Bucket: bucket, Now: c.Now, Quota: quota}), st: st, bucket: bucket, clock: c})
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func upload(name string) Upload { return Upload{Filename: name, ContentType: "text/plain"} }

func mustCreate(t *testing.T, r *Repo, acct, prj string, data []byte, u Upload) *File {
	t.Helper()
	f, err := r.Create(ctx(t), acct, prj, bytes.NewReader(data), u)
	if err != nil {
		t.Fatalf("create %s: %v", u.Filename, err)
	}
	return f
}

func wantCode(t *testing.T, err error, code apierr.Code) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("err = %v; want %s", err, code)
	}
}

// objects lists the bucket's file objects.
func objects(t *testing.T, b blob.Bucket) []string {
	t.Helper()
	var out []string
	for e, err := range b.List(ctx(t), blobPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Key)
	}
	return out
}

func held(t *testing.T, f *fixture, acct, prj string) usage {
	t.Helper()
	u, err := f.repo.usage(ctx(t), acct, prj)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func fileIDs(files []*File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.ID
	}
	return out
}
