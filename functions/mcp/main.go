// Command mcp is the Lambda function of the remote MCP server, whose tools are the key's capabilities.
// The built-in services run in process; the envelope key (KMS) opens the
// protected connections a call names.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/groups/mcp/mcpapi"
	"platformapi/shared/groups/services/servicesapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("mcp", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		return mcpapi.New(servicesapi.FromEnv(os.Getenv, e.Store, e.Services, e.Sealer)), nil
	})
}
