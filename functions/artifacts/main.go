// Command artifacts is the Lambda function of the artifacts group: run
// artifacts, streamed through the API.
package main

import (
	"context"

	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/api"
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("artifacts", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		return runsapi.New(runsapi.Deps{Store: e.Store, Artifacts: s3blob.New(e.AWS.S3(), e.AWS.Names.ArtifactsBucket)}), nil
	})
}
