// Command databases is the Lambda function of the managed-databases group:
// queries and actions on the SQLite files in S3, transfers
// recorded here and run by databases-worker.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/databasesapi"
	"platformapi/shared/databases"
	"platformapi/shared/databases/dbsetup"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/queue"
	"platformapi/shared/work"
)

func main() {
	httpedge.Serve("databases", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		svc, err := dbsetup.Service(ctx, e.AWS, e.Kernel.Store, "/tmp")
		if err != nil {
			return nil, err
		}
		q, err := e.Queue(ctx, e.AWS.Names.Queue(databases.Queue))
		if err != nil {
			return nil, err
		}
		g, err := databasesapi.Group(e.Ports(map[work.Queue]queue.Queue{databases.Queue: q}, nil, nil, svc))
		return g.Register, err
	})
}
