// Command files is the Lambda function of the files group. The group is not
// built yet: every route answers 501 not_implemented after authentication
// and the access controls.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/lambdaedge"
)

func main() {
	lambdaedge.Serve("files", func(ctx context.Context, e *lambdaedge.Env) (func(*api.Kernel), error) {
		return func(*api.Kernel) {}, nil
	})
}
