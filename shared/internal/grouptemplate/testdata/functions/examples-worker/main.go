// Command examples-worker consumes the examples queue.
package main

import (
	"context"

	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/example"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeWorker("examples-worker", func(ctx context.Context, e *lambdaedge.Env) (work.Worker, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(example.Queue))
		if err != nil {
			return work.Worker{}, err
		}
		return example.GroupWork(example.WorkDeps{Queue: q, Logger: e.Logger}).Worker(example.Queue.Consumer)
	})
}
