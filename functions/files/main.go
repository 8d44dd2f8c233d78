// Command files is the Lambda function of the files group:
// uploads, records and downloads of project files in the files bucket.
package main

import (
	"context"
	"os"

	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/api"
	"platformapi/shared/groups/files/filesapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("files", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		quota, err := filesapi.QuotaFromEnv(os.Getenv)
		return filesapi.New(filesapi.Deps{Store: e.Store, Bucket: s3blob.New(e.AWS.S3(), e.AWS.Names.FilesBucket), Quota: quota}), err
	})
}
