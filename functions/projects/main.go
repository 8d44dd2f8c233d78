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
		groups, err := api.Build([]api.NewGroup{projectsapi.Group, usageapi.Group}, e.Ports(nil, nil, nil))
		if err != nil {
			return nil, err
		}
		return func(k *api.Kernel) error { return errors.Join(groups[0].Register(k), groups[1].Register(k)) }, nil
	})
}
