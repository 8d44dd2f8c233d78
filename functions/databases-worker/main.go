// Command databases-worker runs database transfer jobs from the databases
// queue (SQS event source with partial batch failures): it builds export
// archives and validates and swaps in imports, then publishes
// database.transfer.completed or database.transfer.failed.
package main

import (
	"context"
	"errors"

	"platformapi/shared/adapters/work"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/dbsetup"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.ServeWorker("databases-worker", func(ctx context.Context, e *lambdaedge.Env) (work.Worker, error) {
		svc, err := dbsetup.Service(ctx, e.AWS, e.Store, "/tmp")
		if err != nil {
			return work.Worker{}, err
		}
		if e.Webhooks == nil {
			return work.Worker{}, errors.New("databases-worker: the webhook queue is not configured (WEBHOOK_QUEUE_URL)")
		}
		return databases.Work(databases.WorkDeps{Service: svc, Events: e.Events, Logger: e.Logger}).Worker(databases.Queue.Consumer)
	})
}
