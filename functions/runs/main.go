// Command runs is the Lambda function of the runs endpoint group:
//
//	GET /v1/runs
//	POST /v1/runs
//	GET /v1/runs/{runId}
//	POST /v1/runs/{runId}/cancel
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("runs") }
