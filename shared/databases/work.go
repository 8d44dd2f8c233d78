package databases

import (
	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Work is the databases group's work on p: the transfer worker on the
// databases queue, for the service among p's resources (none without it).
func Work(p ports.Ports) ports.Work {
	svc, ok := ports.Resource[*Service](p)
	if !ok {
		return ports.Work{}
	}
	w := NewWorker(WorkerConfig{Service: svc, Events: p.Events, Logger: p.Log(work.Databases.Consumer)})
	return ports.Work{Workers: []work.Worker{w.Work(p.Queue(work.Databases))}}
}
