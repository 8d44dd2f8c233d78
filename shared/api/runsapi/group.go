package runsapi

import (
	"platformapi/shared/api"
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
	d := Deps{Store: p.Store, Queue: p.Queue(work.Runs), Artifacts: p.Artifacts, Services: p.Services}
	return api.Group{Name: "runs", Register: func(k *api.Kernel) error { return Register(k, d) }, Work: w}, nil
}
