package runsapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/runs"
	"platformapi/shared/work"
)

// Group is the runs group on p, with its run worker.
func Group(p ports.Ports) (api.Group, error) {
	w, err := runs.Work(p)
	if err != nil {
		return api.Group{}, err
	}
	d := Deps{Store: p.Store, Queue: p.Queue(runs.Queue), Artifacts: p.Artifacts, Services: p.Services}
	return api.Group{Name: "runs", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: w, Deploy: Deploy}, nil
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
