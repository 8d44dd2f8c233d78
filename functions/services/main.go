// Command services is the Lambda function of the services endpoint group:
//
//	GET /v1/services
//	GET /v1/capabilities
//	GET /v1/capabilities/{serviceId}
//	GET /v1/actions
//	POST /v1/services/{serviceId}/invoke
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("services") }
