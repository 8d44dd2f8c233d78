// Command examples is the throw-away group's function.
package main

import (
	"context"

	"platformapi/shared/api"
	"platformapi/shared/api/exampleapi"
	"platformapi/shared/example"
	"platformapi/shared/lambdaedge/httpedge"
	"platformapi/shared/queue"
	"platformapi/shared/work"
)

func main() {
	httpedge.Serve("examples", func(ctx context.Context, e *httpedge.Env) (func(*api.Kernel) error, error) {
		q, err := e.Queue(ctx, e.AWS.Names.Queue(example.Queue))
		if err != nil {
			return nil, err
		}
		g, err := exampleapi.Group(e.Ports(map[work.Queue]queue.Queue{example.Queue: q}, nil, nil))
		return g.Register, err
	})
}
