// Command projects is the Lambda function of the projects group.
package main

import (
	"context"
	"errors"

	"platformapi/shared/api"
	"platformapi/shared/api/projectsapi"
	"platformapi/shared/api/usageapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("projects", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		return func(k *api.Kernel) error {
			return errors.Join(projectsapi.Register(k, projectsapi.Deps{Store: e.Kernel.Store}), usageapi.Register(k, usageapi.Deps{Store: e.Kernel.Store}))
		}, nil
	})
}
