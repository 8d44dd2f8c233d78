// Command runs is the Lambda function of the durable-runs group:
// runs are queued here and executed by run-worker.
package main

import (
	"context"

	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/api"
	"platformapi/shared/groups/runs"
	"platformapi/shared/groups/runs/runsapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("runs", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(runs.Queue))
		return runsapi.New(runsapi.Deps{Store: e.Store, Queue: q, Artifacts: s3blob.New(e.AWS.S3(), e.AWS.Names.ArtifactsBucket), Services: e.Services}), err
	})
}
