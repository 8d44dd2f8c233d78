// Command webhooks is the Lambda function of the webhooks endpoint group:
//
//	GET /v1/webhooks
//	POST /v1/webhooks
//	PATCH /v1/webhooks/{webhookId}
//	POST /v1/webhooks/{webhookId}/rotate-secret
//	DELETE /v1/webhooks/{webhookId}
//	GET /v1/webhook-deliveries
//	POST /v1/webhook-deliveries/{deliveryId}/replay
//
// One function per group keeps each group's cold start, IAM grants and
// scaling its own. The code is the shared server; this main only wires it
// through lambdaedge.
package main

import "platformapi/shared/lambdaedge"

func main() { lambdaedge.Serve("webhooks") }
