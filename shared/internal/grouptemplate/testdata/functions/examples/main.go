// Command examples is the throw-away group's function.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/exampleapi"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/queue"
	"platformapi/shared/work"
)

func main() {
	httpedge.Serve("examples", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(work.Examples))
		if err != nil {
			return nil, err
		}
		g, err := exampleapi.Group(e.Ports(map[work.Queue]queue.Queue{work.Examples: q}, nil, nil))
		return g.Register, err
	})
}
