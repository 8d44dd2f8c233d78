// Command keys is the Lambda function of the keys endpoint group:
//
//	GET /v1/api-keys
//	POST /v1/api-keys
//	DELETE /v1/api-keys/{id}
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("keys") }
