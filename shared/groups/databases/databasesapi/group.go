package databasesapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/groups/databases"
)

// New is the databases group's operations on d (without a service every
// operation answers 503); its work is databases.Work's.
func New(d Deps) api.Group {
	return api.Group{Name: "databases", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Services: services, Events: events}
}

// On is the databases group on svc and the process's ports, with its
// transfer worker: what a process that serves managed databases lists.
func On(svc *databases.Service) api.NewGroup {
	return func(p ports.Ports) (api.Group, error) {
		q := p.Queue(databases.Queue)
		g := New(Deps{Store: p.Store, Databases: svc, Queue: q})
		g.Work = databases.Work(databases.WorkDeps{Service: svc, Events: p.Events, Queue: q, Logger: p.Logger})
		return g, nil
	}
}

// Group is the databases group of a process that serves no managed
// databases: every operation answers 503.
func Group(p ports.Ports) (api.Group, error) { return On(nil)(p) }

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

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Databases", Description: "The account's managed database: provisioning, read queries, structure and record actions, and portable-copy transfers."}, Files: []string{"databases"}},
}
