// Command files is the Lambda function of the files group (spec 4.2):
// uploads, records and downloads of project files in the files bucket.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/api/filesapi"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("files", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		quota, err := filesapi.QuotaFromEnv(os.Getenv)
		if err != nil {
			return nil, err
		}
		d := filesapi.Deps{Store: e.Kernel.Store, Bucket: s3blob.New(e.AWS.S3(), e.AWS.Names.FilesBucket), Quota: quota}
		return func(k *api.Kernel) error { return filesapi.Register(k, d) }, nil
	})
}
