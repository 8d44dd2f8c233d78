// Command credits is the Lambda function of the credits group:
// the balance and x402 credit purchases. It is the only function that links
// the EVM code of x402.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/groups/credits/creditsapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("credits", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		d, err := creditsapi.FromEnv(os.Getenv, false, e.Store, nil)
		return creditsapi.New(d), err
	})
}
