// Command services is the Lambda function of the managed-services group (spec 4.1): services, capabilities, actions and invocation. The built-in services run in process.
package main

import (
	"context"
	"os"
	"time"

	"platformapi/shared/api"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/envelope/kmsenvelope"
	"platformapi/shared/lambdaedge"
	"platformapi/shared/superbrain"
)

func main() {
	lambdaedge.Serve("services", func(ctx context.Context, e *lambdaedge.Env) (func(*api.Kernel), error) {
		st := e.Kernel.Store
		d := servicesapi.Deps{
			Store: st, Services: superbrain.Router(st, time.Now), Schemas: servicesapi.BuiltinSchemas(),
			MCPAllowedOrigins: servicesapi.ParseOrigins(os.Getenv("MCP_ALLOWED_ORIGINS")),
			Sealer:            kmsenvelope.New(e.AWS.KMS(), e.AWS.Names.KMSKeyID), // opens the connections a call names
		}
		return func(k *api.Kernel) { servicesapi.Register(k, d) }, nil
	})
}
