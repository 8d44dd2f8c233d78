// Command keys is the Lambda function of the API-keys group. It
// alone holds the credit-token signing seed, to redeem first-key tokens.
package main

import (
	"context"
	"errors"
	"os"

	"platformapi/shared/adapters/awsenv/secretseed"
	"platformapi/shared/api"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys/keysapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("keys", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		arn := os.Getenv("CREDIT_TOKEN_SECRET_ARN")
		if arn == "" {
			return api.Group{}, errors.New("keys: CREDIT_TOKEN_SECRET_ARN is not set")
		}
		seed, err := secretseed.Load(ctx, e.AWS.Config, arn)
		if err != nil {
			return api.Group{}, err
		}
		if e.Kernel.CreditTokens, err = credittoken.NewSigner(seed); err != nil {
			return api.Group{}, err
		}
		return keysapi.New(keysapi.Deps{Store: e.Store}), nil
	})
}
