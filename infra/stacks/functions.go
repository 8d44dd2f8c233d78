package stacks

import (
	"slices"
	"time"

	"platformapi/shared/adapters/deploy"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/routes"
	"platformapi/shared/platform"
)

// Function is one Lambda as infra deploys it: its declaration (its
// group's, or the kernel's below) and what the stack derives from it.
type Function struct{ deploy.Function }

// Queues are every declared queue, in the order infra creates them: those
// package work declares, then each group's (platform.Queues).
var Queues []work.Queue

// Functions is the deployment's one list of Lambdas: each group's
// (platform.Groups, deploy.Unit), in the groups' order, then the kernel's.
// The stack derives each one's resource, role, grants, environment, routes,
// log group and alarms.
var Functions []Function

func init() {
	var err error
	if Queues, err = platform.Queues(); err != nil {
		panic("stacks: " + err.Error())
	}
	groups, err := platform.Deployment()
	if err != nil {
		panic("stacks: " + err.Error())
	}
	for _, f := range append(slices.Clone(groups.Functions), kernel...) {
		Functions = append(Functions, Function{f})
	}
}

// Routes are the HTTP API paths the function answers (method ANY), taken
// from the application's route table so that the two cannot disagree: the
// paths of its group under /v1, and for the public group and MCP also at
// the root. The public function also owns "$default", the catch-all that
// answers 404 and 405. Workers have none.
func (f Function) Routes() []string {
	var out []string
	add := func(path string) {
		if !slices.Contains(out, path) {
			out = append(out, path)
		}
	}
	for _, rt := range routes.OfGroup(f.Name) {
		if rt.Group == "public" || rt.ID == routes.MCP.ID {
			add(rt.Path)
		}
		if rt.Path != "/" { // a route key cannot end in "/": $default takes /v1/
			add("/v1" + rt.Path)
		}
	}
	if f.Name == "public" {
		add("$default")
	}
	return out
}

// Worker reports whether the function is fed by a queue instead of routes.
func (f Function) Worker() bool {
	if f.Uses.Has(deploy.ConsumeAuditStream) {
		return true
	}
	for _, q := range Queues {
		if f.Uses.Has(deploy.Consume(q)) {
			return true
		}
	}
	return false
}

// Subscribed reports whether log subscriptions invoke the function.
func (f Function) Subscribed() bool { return f.Uses.Has(deploy.IngestAuditLogs) }

// Rate is the rate (whole minutes) at which an EventBridge rule invokes
// the function, as its declaration's Schedule says; 0 for none. A
// scheduled function has neither routes nor a queue.
func (f Function) Rate() time.Duration { return f.Schedule.Every }

// Scheduled reports whether a schedule invokes the function.
func (f Function) Scheduled() bool { return f.Rate() > 0 }

// kernel are the functions no endpoint group owns, the kernel's: the audit
// rollup and ingest, which every group's requests feed. Every other
// function is its group's (platform.Deployment), declared in the group's
// folder (docs/structure.md).
var kernel = []deploy.Function{
	// Usage counters from the audit events on the table's stream, off the
	// request path: up to 1,000 inserts per invocation, cut into
	// transactions of 33 events in their counters' order (see
	// audit.Rollup), so that a busy account's counters are written about
	// once per 33 events, not once per counter per 33.
	{Name: "audit-rollup", MemoryMiB: 256, Timeout: 60 * time.Second,
		Uses: deploy.Uses{deploy.UseTable, deploy.ConsumeAuditStream}, BatchSize: 1000},
	// The audit events the HTTP functions ship in their logs, off the
	// request path: one conditional put per event (see audit.Ingest).
	{Name: "audit-ingest", MemoryMiB: 256, Timeout: 60 * time.Second, Uses: deploy.Uses{deploy.UseTable, deploy.IngestAuditLogs}},
}

// consumerTimeout is the timeout of the queue's consumer, 0 when the
// function the declaration names does not consume it. A queue's visibility
// timeout must exceed it, or SQS hands a message to a second invocation
// while the first still works on it.
func consumerTimeout(q work.Queue) time.Duration {
	for _, f := range Functions {
		if f.Name == q.Consumer && f.Uses.Has(deploy.Consume(q)) {
			return f.Timeout
		}
	}
	return 0
}
