package awstest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/blob/s3blob"
)

// Bucket creates a fresh bucket, emptied and deleted when the test ends.
func Bucket(t testing.TB, env *awsenv.Env) (*s3.Client, string) {
	t.Helper()
	client, name := env.S3(), Name(t, "test-bucket")
	if err := s3blob.CreateBucket(Context(t), client, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		uploads, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &name})
		if err == nil {
			for _, u := range uploads.Uploads {
				_, _ = client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &name, Key: u.Key, UploadId: u.UploadId})
			}
		}
		pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &name})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				t.Logf("list bucket %s: %v", name, err)
				break
			}
			for _, o := range page.Contents {
				_, _ = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &name, Key: o.Key})
			}
		}
		if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &name}); err != nil {
			t.Logf("delete bucket %s: %v", name, err)
		}
	})
	return client, name
}
