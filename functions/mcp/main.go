// Command mcp is the Lambda of the remote MCP server: POST /mcp and
// /v1/mcp (Streamable HTTP, stateless, JSON responses), authenticated by the
// same bearer key as the REST API.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("mcp") }
