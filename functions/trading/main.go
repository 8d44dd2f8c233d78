// Command trading is the Lambda function of the trading endpoint group:
//
//	POST /v1/trading/quotes
//	POST /v1/trading/orders
//	GET /v1/trading/orders
//	GET /v1/trading/orders/{orderId}
//	GET /v1/trading/positions
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("trading") }
