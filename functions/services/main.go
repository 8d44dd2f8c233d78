// Command services is the Lambda function of the managed-services group:
// services, capabilities, actions and invocation.
// The built-in services run in process; the envelope key (KMS) opens the
// protected connections a call names.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/superbrain"
)

func main() {
	httpedge.Serve("services", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		p := e.Ports(nil, nil, nil)
		p.Services = superbrain.Router(e.Store, p.Clock())
		g, err := servicesapi.Group(p)
		return g.Register, err
	})
}
