// Command public is the Lambda function of the endpoints that need no key:
// /health, /openapi.json (the document embedded at build time), /pricing and
// /docs, at the root and under /v1, and the API's catch-all (404 and 405).
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/publicapi"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.Serve("public", func(ctx context.Context, e *lambdaedge.Env) (func(*api.Kernel), error) {
		return func(k *api.Kernel) { publicapi.Register(k, publicapi.Deps{Backend: "aws"}) }, nil
	})
}
