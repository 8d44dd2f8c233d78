// Command approvals is the Lambda function of the approvals group.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/approvals/approvalsapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("approvals", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		return approvalsapi.New(approvalsapi.Deps{Store: e.Store}), nil
	})
}
