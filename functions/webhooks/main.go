// Command webhooks is the Lambda function of the webhooks group (spec 4.6).
// Signing secrets are sealed with the KMS envelope key.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/api/webhooksapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("webhooks", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		d := webhooksapi.Deps{
			Store: e.Kernel.Store, Sealer: e.Kernel.Sealer, Queue: e.Webhooks,
			AllowPrivate: os.Getenv("ALLOW_PRIVATE_WEBHOOKS") == "true",
		}
		return func(k *api.Kernel) error { return webhooksapi.Register(k, d) }, nil
	})
}
