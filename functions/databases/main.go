// Command databases is the Lambda function of the managed-databases group:
// queries and actions on the SQLite files in S3, transfers
// recorded here and run by databases-worker.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/databases/databasesapi"
	"platformapi/shared/groups/databases/dbsetup"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("databases", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		svc, err := dbsetup.Service(ctx, e.AWS, e.Store, "/tmp")
		if err != nil {
			return api.Group{}, err
		}
		q, err := e.Queue(ctx, e.AWS.Names.Queue(databases.Queue))
		return databasesapi.New(databasesapi.Deps{Store: e.Store, Databases: svc, Queue: q}), err
	})
}
