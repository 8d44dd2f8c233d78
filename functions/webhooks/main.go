// Command webhooks is the Lambda function of the webhooks group.
// Signing secrets are sealed with the KMS envelope key.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/groups/webhooks/webhooksapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("webhooks", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		return webhooksapi.New(webhooksapi.Deps{Store: e.Store, Sealer: e.Sealer, Queue: e.Webhooks, AllowPrivate: webhooks.AllowPrivate(os.Getenv)}), nil
	})
}
