// Command examples-worker consumes the examples queue.
package main

import (
	"context"

	"platformapi/shared/example"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/work"
)

func main() {
	lambdaedge.ServeWorker("examples-worker", func(ctx context.Context, e *lambdaedge.Env) (work.Worker, error) {
		return example.GroupWork(e.Ports(nil, nil, nil)).Worker(example.Queue.Consumer)
	})
}
