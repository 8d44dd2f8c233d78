// Command wallets is the Lambda function of the wallets endpoint group:
//
//	GET /v1/wallets
//	POST /v1/wallets
//	GET /v1/wallets/{walletId}
//	GET /v1/wallets/{walletId}/balances
//	PATCH /v1/wallets/{walletId}/policy
//	POST /v1/wallets/{walletId}/transactions/quote
//	POST /v1/wallets/{walletId}/transactions
//	GET /v1/wallets/{walletId}/transactions
//	GET /v1/wallets/{walletId}/transactions/{transactionId}
//	POST /v1/wallets/{walletId}/signatures/quote
//	POST /v1/wallets/{walletId}/signatures
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("wallets") }
