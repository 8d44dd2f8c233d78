package stacks

import (
	"slices"
	"time"

	"platformapi/shared/deploy"
	"platformapi/shared/platform"
	"platformapi/shared/routes"
	"platformapi/shared/work"
)

// Function is one Lambda as infra deploys it: its declaration (the
// group's, or this package's own list) and what the stack derives from it.
type Function struct{ deploy.Function }

// Queues are every declared queue, in the order infra creates them: those
// package work declares, then each group's (platform.Queues).
var Queues []work.Queue

// Functions is the deployment's one list of Lambdas: those declared below,
// then each group's (platform.Groups, deploy.Unit). The stack derives each
// one's resource, role, grants, environment, routes, log group and alarms.
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
	for _, f := range append(slices.Clone(declared), groups.Functions...) {
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

// Schedule is the rate (whole minutes) at which an EventBridge rule invokes
// the function, as package work declares it; 0 for none. A scheduled
// function has neither routes nor a queue.
func (f Function) Schedule() time.Duration {
	s, _ := work.ScheduleOf(f.Name)
	return s.Every
}

// Scheduled reports whether a schedule invokes the function.
func (f Function) Scheduled() bool { return f.Schedule() > 0 }

// walletUses is what every function that moves a managed wallet's funds
// needs: KMS opens the wallet's sealed key, the chains are where its
// transactions go, and the wallets queue carries each transaction through
// signing, broadcast and confirmation (the worker re-enqueues with a delay).
// The swap router too: a swap is told of each move of its wallet
// transactions, wherever that happens, and asks the router for the route's
// status.
var walletUses = deploy.HTTP.With(deploy.Send(work.Wallets), deploy.UseChains, deploy.UseLiFi)

// declared are the functions declared here rather than by a group: the
// kernel's own (the audit rollup and ingest, the hold sweeper, the webhook
// outbox) and the groups' that predate their groups' declarations, in the
// order the template and the dashboard have always listed them. A new
// group declares its functions in its own folder (docs/structure.md).
var declared = []deploy.Function{
	{Name: "public", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.Uses{deploy.UseArchiveSecret}},   // /health publishes the archive key
	{Name: "keys", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.UseCreditSecret)}, // seals the secrets it answers for replay
	{Name: "services", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},                          // opens the connections a call names
	{Name: "credits", MemoryMiB: 256, Timeout: 29 * time.Second, Uses: deploy.HTTP.With(deploy.UseX402)},
	{Name: "projects", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
	{Name: "files", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP.With(deploy.UseFiles)},
	{Name: "connections", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
	{Name: "databases", MemoryMiB: 1024, Timeout: 29 * time.Second, Uses: deploy.HTTP.With(deploy.UseArchives, deploy.UseArchiveSecret, deploy.Send(work.Databases)),
		EphemeralMiB: 2048}, // two versions of a 256 MiB database in the /tmp cache
	{Name: "wallets", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletUses}, // seals new keys, opens them to sign
	{Name: "trading", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},
	// Executes swaps as wallet transactions; quotes come from the router.
	{Name: "swaps", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletUses},
	{Name: "runs", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.Send(work.Runs), deploy.UseArtifactsRead)},
	{Name: "approvals", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP},
	{Name: "artifacts", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP.With(deploy.UseArtifactsRead)},
	{Name: "webhooks", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: deploy.HTTP}, // seals signing secrets
	{Name: "mcp", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: deploy.HTTP},      // opens the connections a tool call names
	{Name: "webhook-worker", MemoryMiB: 256, Timeout: 60 * time.Second,
		Uses: deploy.Uses{deploy.UseTable, deploy.Consume(work.Webhooks), deploy.UseKMS}, BatchSize: 10}, // KMS opens signing secrets
	// One run per invocation: a run can take minutes, and a batch would make
	// every other run in it wait for the slowest.
	{Name: "run-worker", MemoryMiB: 1024, Timeout: 5 * time.Minute,
		Uses: deploy.Uses{deploy.UseTable, deploy.Consume(work.Runs), deploy.UseArtifactsWrite, deploy.Send(work.Webhooks), deploy.UseKMS}, BatchSize: 1}, // KMS opens the connections a run names
	// Deletes file objects that no record owns (an upload or a deletion
	// that died half-way); see files.Repo.Sweep.
	{Name: "file-sweeper", MemoryMiB: 256, Timeout: 5 * time.Minute, Uses: deploy.Uses{deploy.UseTable, deploy.UseFiles}},
	// Releases credit holds a crash orphaned, each with its ledger entry,
	// once their holder's deadline and credits.GraceAfterDeadline passed;
	// see credits.Ledger.SweepHolds.
	{Name: "hold-sweeper", MemoryMiB: 256, Timeout: 2 * time.Minute, Uses: deploy.Uses{deploy.UseTable}},
	// Advances resting trading orders each minute (the paper tape's
	// resolution) and publishes their trading.order.<status> events; its
	// timeout stays under the period so passes rarely overlap (an overlap
	// is harmless: every order write is conditional on its revision).
	{Name: "trading-recheck", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: deploy.Uses{deploy.UseTable, deploy.Send(work.Webhooks)}},
	// One transfer per invocation: a snapshot or a validation of a 256 MiB
	// database takes minutes and its /tmp space. The timeout stays above
	// the worker's job timeout (databases.DefaultJobTimeout, 10 minutes).
	{Name: "databases-worker", MemoryMiB: 2048, Timeout: 12 * time.Minute,
		Uses: deploy.Uses{deploy.UseTable, deploy.Consume(work.Databases), deploy.UseArchives, deploy.UseArchiveSecret, deploy.Send(work.Webhooks)}, BatchSize: 1, EphemeralMiB: 4096},
	// Signs, broadcasts and confirms wallet transactions. One message per
	// invocation, as for databases-worker: a message advances one
	// transaction against its chain's RPC endpoint, and a batch would make
	// the others wait for the slowest endpoint. Waiting for a receipt is a
	// delayed re-enqueue, never a sleep, so a minute covers the RPC calls.
	{Name: "wallets-worker", MemoryMiB: 512, Timeout: 60 * time.Second,
		Uses: walletUses.With(deploy.Consume(work.Wallets)), BatchSize: 1},
	// Each minute, advances every wallet transaction not yet final whose
	// message was lost or dead-lettered, or whose credit settlement a crash
	// left pending (see wallets.Service.Recheck); its timeout stays under
	// the period, and an overlap is harmless (transaction writes are
	// conditional on their revision).
	{Name: "wallets-recheck", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: walletUses},
	// Fans out the webhook events a crash left in the outbox (see
	// webhooks.Repo.SweepOutbox); a request fans out its own at once.
	{Name: "webhook-outbox", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: deploy.Uses{deploy.UseTable, deploy.Send(work.Webhooks)}},
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
