// Command public is the Lambda function of the public endpoints, which need
// no API key:
//
//	GET /health (and /v1/health)
//	GET /openapi.json (and /v1/openapi.json)
//	GET /pricing (and /v1/pricing)
//	GET /docs (and /v1/docs)
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("public") }
