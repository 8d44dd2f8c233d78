// Command artifacts is the Lambda function of the artifacts endpoint group:
//
//	GET /v1/artifacts
//	GET /v1/artifacts/{artifactId}/content
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("artifacts") }
