// Command swaps is the Lambda function of the swaps endpoint group:
//
//	GET /v1/swaps/tokens
//	POST /v1/swaps/quote
//	POST /v1/swaps
//	GET /v1/swaps
//	GET /v1/swaps/{swapId}
//	POST /v1/swaps/prepare
//	GET /v1/swaps/routes/{routeId}
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("swaps") }
