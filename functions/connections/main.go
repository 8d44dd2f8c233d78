// Command connections is the Lambda function of the protected-connections
// group. Credentials are sealed with the KMS envelope key; the
// encryption context binds account, connection and version.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/connections/connectionsapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("connections", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		return connectionsapi.New(connectionsapi.Deps{Store: e.Store, Sealer: e.Sealer}), nil
	})
}
