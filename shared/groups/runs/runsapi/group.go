package runsapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/groups/runs"
)

// New is the runs group's operations on d; its work is runs.Work's.
func New(d Deps) api.Group {
	return api.Group{Name: "runs", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy}
}

// Group is the runs group on p, with its run worker.
func Group(p ports.Ports) (api.Group, error) {
	q := p.Queue(runs.Queue)
	g := New(Deps{Store: p.Store, Queue: q, Artifacts: p.Artifacts, Services: p.Services})
	var err error
	g.Work, err = runs.Work(runs.WorkDeps{Store: p.Store, Queue: q, Artifacts: p.Artifacts, Services: p.Services,
		Sealer: p.Sealer, Now: p.Now, Logger: p.Logger, Getenv: p.Getenv})
	return g, err
}

// Deploy is what the runs group deploys: the runs queue, the runs and
// artifacts functions (both serve this group's routes) and the run worker.
var Deploy = deploy.Unit{
	Queues: []work.Queue{runs.Queue},
	Functions: []deploy.Function{
		{Name: "runs", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.Send(runs.Queue), deploy.UseArtifactsRead)},
		{Name: "artifacts", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.UseArtifactsRead)},
		runs.WorkerFunction,
	},
}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Runs", Description: "Durable runs of long operations: start, follow and cancel."}, Files: []string{"runs"}},
	{Tag: api.Tag{Name: "Artifacts", Description: "What durable runs produce, listed and downloaded."}, Files: []string{"artifacts"}},
}
