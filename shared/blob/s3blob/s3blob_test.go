package s3blob_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"platformapi/shared/awsenv"

	"platformapi/shared/awsenv/awstest"
	"platformapi/shared/blob"
	"platformapi/shared/blob/blobtest"
	"platformapi/shared/blob/s3blob"
)

// threshold is S3's smallest part size, so the suite's large objects take
// the multipart path without being large.
const threshold = 5 << 20

func TestConformance(t *testing.T) {
	env := awstest.Env(t)
	blobtest.RunConformance(t, blobtest.Harness{
		New: func(t *testing.T) blob.Bucket {
			client, name := awstest.Bucket(t, env)
			return s3blob.New(client, name, s3blob.WithMultipartThreshold(threshold))
		},
		CanPresign: true,
		LargeSize:  2*threshold + 1,
	})
}

// TestOutagesAnswerUnavailableAndStoreNothing injects S3's failures on each
// call of both write paths, after the SDK's own retries.
func TestOutagesAnswerUnavailableAndStoreNothing(t *testing.T) {
	faults := awsenv.NewFaults()
	env := awstest.Env(t, awsenv.WithAPIOptions(faults.APIOption()))
	client, name := awstest.Bucket(t, env)
	b := s3blob.New(client, name, s3blob.WithMultipartThreshold(threshold))
	ctx := awstest.Context(t)
	for _, c := range []struct {
		op   string
		size int
	}{
		{"S3.PutObject", 10},
		{"S3.UploadPart", threshold + 1},
		{"S3.CopyObject", threshold + 1},
	} {
		for _, fault := range []awsenv.Fault{awsenv.Throttle, awsenv.ServerError} {
			t.Run(fmt.Sprintf("%s/%d", c.op, fault), func(t *testing.T) {
				faults.Set(c.op, fault)
				_, err := b.Put(ctx, "k", bytes.NewReader(make([]byte, c.size)), blob.PutOptions{})
				faults.Clear()
				if !errors.Is(err, blob.ErrUnavailable) {
					t.Fatalf("err = %v; want ErrUnavailable", err)
				}
				if _, err := b.Head(ctx, "k"); !errors.Is(err, blob.ErrNotFound) {
					t.Fatalf("after the outage: %v; want nothing stored", err)
				}
			})
		}
	}
}
