// Command examples is the throw-away group's function.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/groups/example"
	"platformapi/shared/groups/example/exampleapi"
	"platformapi/shared/lambdaedge/httpedge"
)

func main() {
	httpedge.Serve("examples", func(ctx context.Context, e *httpedge.Env) (api.Group, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(example.Queue))
		return exampleapi.New(exampleapi.Deps{Queue: q, Logger: e.Logger}), err
	})
}
