// Command credits is the Lambda function of the credits group (spec 4.1):
// the balance and x402 credit purchases. It is the only function that links
// the EVM code of x402.
package main

import (
	"context"
	"os"

	"platformapi/shared/api"
	"platformapi/shared/api/creditsapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/topup"
)

func main() {
	httpedge.Serve("credits", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		cfg, fac, err := topup.FromEnv(os.Getenv, false, e.Kernel.Store, nil)
		if err != nil {
			return nil, err
		}
		d := creditsapi.Deps{Store: e.Kernel.Store, TopUp: cfg, Facilitator: fac}
		return func(k *api.Kernel) error { return creditsapi.Register(k, d) }, nil
	})
}
