package lambdaedge

import (
	"os"

	"platformapi/shared/blob"
	"platformapi/shared/ports"
	"platformapi/shared/queue"
	"platformapi/shared/webhooks"
	"platformapi/shared/work"
)

// Ports are the function's environment as the groups' work constructors
// take it (ports.Ports): the table, the envelope key and the webhook queue
// where granted (and the webhook publisher on it), the configuration from the process environment, and the
// given queues (by declaration), buckets and resources on top.
func (e *Env) Ports(queues map[work.Queue]queue.Queue, artifacts, files blob.Bucket, resources ...any) ports.Ports {
	p := ports.Ports{Backend: "aws", Store: e.Store, Logger: e.Logger, Sealer: e.Sealer, Queues: map[string]queue.Queue{},
		Artifacts: artifacts, Files: files, Getenv: os.Getenv, Resources: resources}
	if e.Webhooks != nil {
		p.Queues[work.Webhooks.Name] = e.Webhooks
		p.Events = webhooks.NewRepo(webhooks.Config{Store: e.Store, Queue: e.Webhooks})
	}
	for q, c := range queues {
		if c != nil {
			p.Queues[q.Name] = c
		}
	}
	return p
}
