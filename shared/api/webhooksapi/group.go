package webhooksapi

import (
	"platformapi/shared/api"
	"platformapi/shared/ports"
	"platformapi/shared/webhooks"
	"platformapi/shared/work"
)

// Group is the webhooks group on p, with its delivery worker and outbox
// pass; ALLOW_PRIVATE_WEBHOOKS=true admits private receivers (local
// development).
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store, Sealer: p.Sealer, Queue: p.Queue(work.Webhooks), AllowPrivate: p.Env("ALLOW_PRIVATE_WEBHOOKS") == "true"}
	return api.Group{Name: "webhooks", Register: func(k *api.Kernel) error { return Register(k, d) }, Work: webhooks.Work(p)}, nil
}
