package webhooksapi

import (
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/groups/webhooks"
)

// New is the webhooks group's operations on d; its work is
// webhooks.Work's.
func New(d Deps) api.Group {
	return api.Group{Name: "webhooks", Sections: sections, Routes: routeTable, Scopes: scopeTable, Register: func(k *api.Kernel) error { return Register(k, d) }, Deploy: Deploy,
		Events: events}
}

// Group is the webhooks group on p, with its delivery worker and outbox
// pass.
func Group(p ports.Ports) (api.Group, error) {
	q, private := p.Queue(work.Webhooks), webhooks.AllowPrivate(p.Getenv)
	backoff := p.Backoff
	if backoff == nil {
		var err error
		if backoff, err = webhooks.RetryBackoff(p.Getenv); err != nil {
			return api.Group{}, err
		}
	}
	g := New(Deps{Store: p.Store, Sealer: p.Sealer, Queue: q, AllowPrivate: private})
	g.Work = webhooks.Work(webhooks.WorkDeps{Store: p.Store, Sealer: p.Sealer, Queue: q, Now: p.Now, Logger: p.Logger,
		AllowPrivate: private, Backoff: backoff})
	return g, nil
}

// Deploy is the webhooks group's function (it seals signing secrets), its
// delivery worker and its outbox pass. The webhook queue is the kernel's
// (work.Webhooks): every group sends to it.
var Deploy = deploy.Unit{Functions: []deploy.Function{
	{Name: "webhooks", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
	webhooks.WorkerFunction,
	webhooks.OutboxFunction,
}}

// sections are the reference's sections of the group's routes.
var sections = []api.Section{
	{Tag: api.Tag{Name: "Webhooks", Description: "Signed event deliveries to your endpoints: subscriptions, secret rotation, delivery history and replay."}, Files: []string{"webhooks"}},
}
