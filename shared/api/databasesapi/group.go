package databasesapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/databases"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Group is the databases group on p: the service among p's resources
// (none: every operation answers 503), with its transfer worker.
func Group(p ports.Ports) (api.Group, error) {
	svc, _ := ports.Resource[*databases.Service](p)
	d := Deps{Store: p.Store, Databases: svc, Queue: p.Queue(databases.Queue)}
	return api.Group{Name: "databases", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: databases.Work(p), Deploy: Deploy,
		Services: services, Events: events}, nil
}

// Deploy is what the databases group deploys: its queue, its function
// (two versions of a 256 MiB database in its /tmp cache) and its transfer
// worker.
var Deploy = deploy.Unit{
	Queues: []work.Queue{databases.Queue},
	Functions: []deploy.Function{
		{Name: "databases", MemoryMiB: 1024, Timeout: 29 * time.Second,
			Uses:         deploy.HTTP.With(deploy.UseArchives, deploy.UseArchiveSecret, deploy.Send(databases.Queue)),
			EphemeralMiB: 2048},
		databases.WorkerFunction,
	},
}
