package s3blob

import (
	"context"
	"iter"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"platformapi/shared/adapters/blob"
)

// WithListPageSize sets how many keys one ListObjectsV2 call asks for (S3
// answers at most 1000).
func WithListPageSize(n int32) Option {
	return func(b *Bucket) { b.pageSize = min(max(n, 1), 1000) }
}

// List pages through ListObjectsV2, which returns keys in ascending UTF-8
// byte order, the port's order. Unverified uploads under TempPrefix are not
// objects of the port and are never listed.
func (b *Bucket) List(ctx context.Context, prefix string) iter.Seq2[blob.Entry, error] {
	return func(yield func(blob.Entry, error) bool) {
		pages := s3.NewListObjectsV2Paginator(b.s3, &s3.ListObjectsV2Input{
			Bucket: &b.bucket, Prefix: aws.String(prefix), MaxKeys: aws.Int32(b.pageSize),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(blob.Entry{}, classify("ListObjectsV2", prefix, err))
				return
			}
			for _, o := range page.Contents {
				key := aws.ToString(o.Key)
				if strings.HasPrefix(key, TempPrefix) {
					continue
				}
				if !yield(blob.Entry{Key: key, Size: aws.ToInt64(o.Size), Modified: aws.ToTime(o.LastModified)}, nil) {
					return
				}
			}
		}
	}
}
