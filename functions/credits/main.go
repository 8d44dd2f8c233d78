// Command credits is the Lambda function of the credits endpoint group:
//
//	GET /v1/credits/balance
//	POST /v1/credits/x402/top-up
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("credits") }
