// Command databases is the Lambda function of the databases endpoint group:
//
//	GET /v1/databases/account
//	POST /v1/databases/account
//	DELETE /v1/databases/account
//	POST /v1/databases/query
//	POST /v1/databases/actions
//	POST /v1/databases/transfers
//	PUT /v1/databases/transfers/{transferId}/parts/{partNumber}
//	POST /v1/databases/transfers/{transferId}/complete
//	GET /v1/databases/transfers/{transferId}/archive
//	GET /v1/databases/transfers/{transferId}
//	DELETE /v1/databases/transfers/{transferId}
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("databases") }
