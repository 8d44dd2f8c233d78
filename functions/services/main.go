// Command services is the Lambda function of the managed-services group (spec 4.1): services, capabilities, actions and invocation.
// The built-in services run in process; the envelope key (KMS) opens the
// protected connections a call names.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("services", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		d := servicesapi.DeployedDeps(e.Kernel.Store, e.Kernel.Sealer)
		return func(k *api.Kernel) error { return servicesapi.Register(k, d) }, nil
	})
}
