// Command credits is the Lambda function of the credits group:
// the balance and x402 credit purchases. It is the only function that links
// the EVM code of x402.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/creditsapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("credits", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		g, err := creditsapi.Group(e.Ports(nil, nil, nil))
		return g.Register, err
	})
}
