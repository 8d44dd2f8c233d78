// Command mcp is the Lambda function of the remote MCP server, whose tools are the key's capabilities.
// The built-in services run in process; the envelope key (KMS) opens the
// protected connections a call names.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/mcpapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/superbrain"
)

func main() {
	httpedge.Serve("mcp", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		p := e.Ports(nil, nil, nil)
		p.Services = superbrain.Router(e.Store, p.Clock())
		g, err := mcpapi.Group(p)
		return g.Register, err
	})
}
