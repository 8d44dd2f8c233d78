package webhooksapi

import (
	"time"

	"platformapi/shared/api"
	"platformapi/shared/deploy"
	"platformapi/shared/ports"
	"platformapi/shared/webhooks"
	"platformapi/shared/work"
)

// Group is the webhooks group on p, with its delivery worker and outbox
// pass; ALLOW_PRIVATE_WEBHOOKS=true admits private receivers (local
// development).
func Group(p ports.Ports) (api.Group, error) {
	d := Deps{Store: p.Store, Sealer: p.Sealer, Queue: p.Queue(work.Webhooks), AllowPrivate: p.Env("ALLOW_PRIVATE_WEBHOOKS") == "true"}
	return api.Group{Name: "webhooks", Routes: routeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Work: webhooks.Work(p), Deploy: Deploy,
		Events: events}, nil
}

// Deploy is the webhooks group's function (it seals signing secrets), its
// delivery worker and its outbox pass. The webhook queue is the kernel's
// (work.Webhooks): every group sends to it.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "webhooks", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
	webhooks.WorkerFunction,
	webhooks.OutboxFunction,
}}
