package s3blob

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// CreateBucket creates bucket unless this account already has it. On real
// AWS the CDK stack owns buckets; this serves LocalStack, moto and tests.
func CreateBucket(ctx context.Context, client *s3.Client, bucket string) error {
	in := &s3.CreateBucketInput{Bucket: &bucket}
	if region := client.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	_, err := client.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("s3blob: create bucket %s: %w", bucket, err)
	}
	return nil
}
