// Command run-worker executes durable runs from the runs queue, on the
// authority of the key that created each run, and writes their artifacts.
package main

import (
	"context"
	"errors"

	"platformapi/shared/adapters/blob/s3blob"
	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/runs"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeWorker("run-worker", func(ctx context.Context, e *lambdaedge.Env) (work.Worker, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(runs.Queue))
		if err != nil {
			return work.Worker{}, err
		}
		if q == nil {
			return work.Worker{}, errors.New("run-worker: the runs queue is not configured (RUNS_QUEUE_URL)")
		}
		// The envelope key opens the connections a run names.
		w, err := runs.Work(runs.WorkDeps{Store: e.Store, Queue: q, Artifacts: s3blob.New(e.AWS.S3(), e.AWS.Names.ArtifactsBucket),
			Services: e.Services, Sealer: e.Sealer, Logger: e.Logger})
		if err != nil {
			return work.Worker{}, err
		}
		return w.Worker(runs.Queue.Consumer)
	})
}
