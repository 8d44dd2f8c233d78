package s3blob_test

import (
	"testing"

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
