// Command files is the Lambda function of the files endpoint group:
//
//	GET /v1/files
//	POST /v1/files
//	GET /v1/files/{fileId}
//	DELETE /v1/files/{fileId}
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("files") }
