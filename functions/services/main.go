// Command services is the Lambda function of the managed-services group:
// services, capabilities, actions and invocation.
// The built-in services run in process; the envelope key (KMS) opens the
// protected connections a call names.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("services", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		return servicesapi.New(servicesapi.FromEnv(os.Getenv, e.Store, e.Services, e.Sealer)), nil
	})
}
