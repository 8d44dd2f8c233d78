// Command projects is the Lambda function of the projects group.
package main

import (
	"context"
	"errors"

	"platformapi/shared/api"
	"platformapi/shared/groups/projects/projectsapi"
	"platformapi/shared/groups/usage/usageapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("projects", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		projects, usage := projectsapi.New(projectsapi.Deps{Store: e.Store}), usageapi.New(usageapi.Deps{Store: e.Store})
		register := projects.Register
		projects.Register = func(k *api.Kernel) error { return errors.Join(register(k), usage.Register(k)) }
		return projects, nil
	})
}
