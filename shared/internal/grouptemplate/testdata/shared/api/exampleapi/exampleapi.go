// Package exampleapi is a throw-away endpoint group.
package exampleapi

import (
	"context"
	"net/http"

	"platformapi/shared/api"
	"platformapi/shared/apierr"
	"platformapi/shared/example"
	"platformapi/shared/ports"
	"platformapi/shared/queue"
)

// Deps are the group's ports.
type Deps struct {
	Queue queue.Queue
}

// Group is the group on p, with its worker.
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Queue: p.Queue(example.Queue)}
	return api.Group{Name: "examples", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: example.GroupWork(p), Deploy: example.Deploy,
		Services: services, Events: events}, nil
}

// Register adds the group's operation.
func Register(k *api.Kernel, d Deps) error {
	api.Register(k, "examples.create", http.StatusAccepted, func(ctx context.Context, _ *struct{}) (*api.Body[map[string]string], error) {
		if d.Queue == nil {
			return nil, apierr.New(apierr.ServiceUnavailable, "Examples are not available on this deployment.")
		}
		if err := d.Queue.Send(ctx, queue.Message{Body: []byte("{}")}); err != nil {
			return nil, err
		}
		out := map[string]string{"status": "queued"}
		k.Publish(ctx, eventQueued, out)
		return api.Reply(out), nil
	})
	return nil
}
