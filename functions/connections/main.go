// Command connections is the Lambda function of the connections endpoint group:
//
//	GET /v1/connections
//	POST /v1/connections
//	GET /v1/connections/{connectionId}
//	PATCH /v1/connections/{connectionId}
//	DELETE /v1/connections/{connectionId}
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("connections") }
