// Command runs is the Lambda function of the durable-runs group (spec 4.6):
// runs are queued here and executed by run-worker.
package main

import (
	"context"
	"time"

	"platformapi/shared/api"
	"platformapi/shared/api/runsapi"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/superbrain"
	"platformapi/shared/work"
)

func main() {
	httpedge.Serve("runs", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(work.Runs))
		if err != nil {
			return nil, err
		}
		st := e.Kernel.Store
		d := runsapi.Deps{Store: st, Queue: q, Artifacts: s3blob.New(e.AWS.S3(), e.AWS.Names.ArtifactsBucket), Services: superbrain.Router(st, time.Now)}
		return func(k *api.Kernel) error { return runsapi.Register(k, d) }, nil
	})
}
