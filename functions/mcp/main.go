// Command mcp is the Lambda function of the remote MCP server (spec 1.5), whose tools are the key's capabilities.
// The built-in services run in process; the envelope key (KMS) opens the
// protected connections a call names.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/mcpapi"
	"platformapi/shared/api/servicesapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("mcp", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		d := servicesapi.DeployedDeps(e.Kernel.Store, e.Kernel.Sealer)
		return func(k *api.Kernel) error { return mcpapi.Register(k, d) }, nil
	})
}
