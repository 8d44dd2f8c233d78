// Command runs is the Lambda function of the durable-runs group:
// runs are queued here and executed by run-worker.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/runsapi"
	"platformapi/shared/blob/s3blob"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/queue"
	"platformapi/shared/runs"
	"platformapi/shared/superbrain"
	"platformapi/shared/work"
)

func main() {
	httpedge.Serve("runs", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(runs.Queue))
		if err != nil {
			return nil, err
		}
		p := e.Ports(map[work.Queue]queue.Queue{runs.Queue: q}, s3blob.New(e.AWS.S3(), e.AWS.Names.ArtifactsBucket), nil)
		p.Services = superbrain.Router(e.Store, p.Clock())
		g, err := runsapi.Group(p)
		return g.Register, err
	})
}
