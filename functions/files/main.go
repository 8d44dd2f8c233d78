// Command files is the Lambda function of the files group:
// uploads, records and downloads of project files in the files bucket.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/filesapi"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("files", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		g, err := filesapi.Group(e.Ports(nil, nil, s3blob.New(e.AWS.S3(), e.AWS.Names.FilesBucket)))
		return g.Register, err
	})
}
