// Command webhooks is the Lambda function of the webhooks group.
// Signing secrets are sealed with the KMS envelope key.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/webhooksapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("webhooks", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		g, err := webhooksapi.Group(e.Ports(nil, nil, nil))
		return g.Register, err
	})
}
