// Command projects is the Lambda function of the projects endpoint group:
//
//	GET /v1/projects
//	POST /v1/projects
//	GET /v1/projects/{projectId}
//	PATCH /v1/projects/{projectId}
//	DELETE /v1/projects/{projectId}
//	GET /v1/usage
//	GET /v1/audit-events
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("projects") }
