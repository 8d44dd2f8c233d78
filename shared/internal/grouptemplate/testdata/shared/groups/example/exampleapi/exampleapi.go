// Package exampleapi is a throw-away endpoint group.
package exampleapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
	"platformapi/shared/groups/example"
)

// Deps are the group's ports.
type Deps struct {
	Store  store.Store
	Queue  queue.Queue
	Logger *slog.Logger
}

// New is the group on d, with its worker.
func New(d Deps) api.Group {
	return api.Group{Name: "examples", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: example.GroupWork(example.WorkDeps{Store: d.Store, Queue: d.Queue, Logger: d.Logger}),
		Deploy: example.Deploy, Services: services, Events: events}
}

// Group is the examples group on the process's ports, by name.
func Group(p ports.Ports) (api.Group, error) {
	return New(Deps{Store: p.Store, Queue: p.Queue(example.Queue), Logger: p.Logger}), nil
}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{{Tag: api.Tag{Name: "Examples", Description: "Notes queued for the group's worker."}, Files: []string{"examples"}}}

// Register adds the group's operation.
func Register(k *api.Kernel, d Deps) error {
	api.Register(k, "examples.create", http.StatusAccepted, func(ctx context.Context, _ *struct{}) (*api.Body[map[string]string], error) {
		if d.Queue == nil {
			return nil, apierr.New(apierr.ServiceUnavailable, "Examples are not available on this deployment.")
		}
		id := ids.New("ex", time.Now())
		if err := d.Queue.Send(ctx, queue.Message{Body: []byte(id)}); err != nil {
			return nil, err
		}
		out := map[string]string{"id": id, "status": "queued"}
		k.Publish(ctx, eventQueued, out)
		return api.Reply(out), nil
	})
	return nil
}
