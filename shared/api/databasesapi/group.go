package databasesapi

import (
	"platformapi/shared/api"
	"platformapi/shared/databases"
	"platformapi/shared/ports"
	"platformapi/shared/work"
)

// Group is the databases group on p: the service among p's resources
// (none: every operation answers 503), with its transfer worker.
func Group(p ports.Ports) (api.Group, error) {
	svc, _ := ports.Resource[*databases.Service](p)
	d := Deps{Store: p.Store, Databases: svc, Queue: p.Queue(work.Databases)}
	return api.Group{Name: "databases", Register: func(k *api.Kernel) error { return Register(k, d) }, Work: databases.Work(p)}, nil
}
