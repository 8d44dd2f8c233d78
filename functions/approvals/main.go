// Command approvals is the Lambda function of the approvals endpoint group:
//
//	GET /v1/approvals
//	POST /v1/approvals/service-actions
//	POST /v1/approvals/{approvalId}
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("approvals") }
