package stacks

import (
	"slices"
	"time"

	"platformapi/shared/routes"
	"platformapi/shared/work"
)

// Use is a set of resources a function touches. Each bit grants exactly one
// permission and passes exactly the environment variables that go with it,
// so a function can never see a resource it was not granted, nor be granted
// one it is not told about.
type Use uint64

const (
	// UseTable: read/write items of the single table (TABLE_NAME).
	UseTable Use = 1 << iota
	// UseFiles: read/write the files bucket (FILES_BUCKET).
	UseFiles
	// UseArchives: read/write the database archives bucket (ARCHIVES_BUCKET).
	UseArchives
	// UseArtifactsRead: read the artifacts bucket (ARTIFACTS_BUCKET).
	UseArtifactsRead
	// UseArtifactsWrite: read/write the artifacts bucket (ARTIFACTS_BUCKET).
	UseArtifactsWrite
	// UseKMS: encrypt/decrypt with the envelope key (KMS_KEY_ID).
	UseKMS
	// UseCreditSecret: read the credit-token signing seed (CREDIT_TOKEN_SECRET_ARN).
	UseCreditSecret
	// UseX402: the x402 payment settings (X402_*); no AWS permission.
	UseX402
	// UseArchiveSecret: read the database archive signing seed
	// (ARCHIVE_SIGNING_SECRET_ARN).
	UseArchiveSecret
	// ConsumeAuditStream: triggered by the table's stream, audit events'
	// inserts only (no environment; reads the stream, on failure sends to
	// the audit rollup's dead-letter queue).
	ConsumeAuditStream
	// UseChains: the JSON-RPC endpoint of each configured chain
	// (RPC_URL_<chainId>, from the rpcUrls setting); no AWS permission.
	UseChains
	// UseLiFi: the swap router's endpoint and key (LIFI_BASE_URL,
	// LIFI_API_KEY); no AWS permission.
	UseLiFi
	// IngestAuditLogs: invoked by a subscription filter on every HTTP
	// function's log group with the audit event lines (no environment;
	// a delivery that fails after the asynchronous retries goes to the
	// audit ingest's dead-letter queue).
	IngestAuditLogs
	// queueBits are the first of the bits of the queues package work
	// declares, two per queue (see Send and Consume).
	queueBits
)

// Send: send to declared queue q (<Env>_QUEUE_URL).
func Send(q work.Queue) Use { return queueBit(q, 0) }

// Consume: triggered by declared queue q (<Env>_QUEUE_URL); only its
// Consumer may.
func Consume(q work.Queue) Use { return queueBit(q, 1) }

func queueBit(q work.Queue, consume int) Use {
	i := slices.IndexFunc(work.Queues, func(d work.Queue) bool { return d.Name == q.Name })
	if i < 0 {
		panic("stacks: queue " + q.Name + " is not in work.Queues")
	}
	return queueBits << (2*i + consume)
}

// Has reports whether every bit of o is in u.
func (u Use) Has(o Use) bool { return u&o == o }

// Function is one Lambda: functions/<Name>/main.go, built by `make build`
// into <assetDir>/<Name>/bootstrap.
type Function struct {
	Name string
	// MemoryMiB also buys CPU on Lambda; the groups that sign, hash or
	// compress get more.
	MemoryMiB int
	// Timeout of an HTTP function stays under the HTTP API's 30 s
	// integration limit, or the client sees a 503 while the function runs on.
	Timeout time.Duration
	Uses    Use
	// BatchSize is how many queue messages a worker takes per invocation.
	BatchSize int
	// EphemeralMiB is the size of /tmp (Lambda's default 512 when 0): the
	// databases functions keep SQLite files and archives there.
	EphemeralMiB int
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
	if f.Uses.Has(ConsumeAuditStream) {
		return true
	}
	for _, q := range work.Queues {
		if f.Uses.Has(Consume(q)) {
			return true
		}
	}
	return false
}

// Subscribed reports whether log subscriptions invoke the function.
func (f Function) Subscribed() bool { return f.Uses.Has(IngestAuditLogs) }

// Schedule is the rate (whole minutes) at which an EventBridge rule invokes
// the function, as package work declares it; 0 for none. A scheduled
// function has neither routes nor a queue.
func (f Function) Schedule() time.Duration {
	s, _ := work.ScheduleOf(f.Name)
	return s.Every
}

// Scheduled reports whether a schedule invokes the function.
func (f Function) Scheduled() bool { return f.Schedule() > 0 }

// every HTTP group except public emits webhook events and reads the table,
// and holds the envelope key: its idempotency records keep an HMAC of each
// request under a sealed key, never a plain digest a reader of the table
// could test guesses against (a connection's password, say).
var group = UseTable | Send(work.Webhooks) | UseKMS

// walletUses is what every function that moves a managed wallet's funds
// needs: KMS opens the wallet's sealed key, the chains are where its
// transactions go, and the wallets queue carries each transaction through
// signing, broadcast and confirmation (the worker re-enqueues with a delay).
// The swap router too: a swap is told of each move of its wallet
// transactions, wherever that happens, and asks the router for the route's
// status.
var walletUses = UseTable | Send(work.Webhooks) | UseKMS | Send(work.Wallets) | UseChains | UseLiFi

// Functions is the deployment's one list of Lambdas. Adding a function is
// adding a line here (and its functions/<name>/main.go); the stack derives
// its resource, role, grants, environment, routes, log group and alarms.
var Functions = []Function{
	{Name: "public", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: UseArchiveSecret},      // /health publishes the archive key
	{Name: "keys", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group | UseCreditSecret}, // seals the secrets it answers for replay
	{Name: "services", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: group},               // opens the connections a call names
	{Name: "credits", MemoryMiB: 256, Timeout: 29 * time.Second, Uses: group | UseX402},
	{Name: "projects", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group},
	{Name: "files", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: group | UseFiles},
	{Name: "connections", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group},
	{Name: "databases", MemoryMiB: 1024, Timeout: 29 * time.Second, Uses: group | UseArchives | UseArchiveSecret | Send(work.Databases),
		EphemeralMiB: 2048}, // two versions of a 256 MiB database in the /tmp cache
	{Name: "wallets", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletUses}, // seals new keys, opens them to sign
	{Name: "trading", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: group},
	// Executes swaps as wallet transactions; quotes come from the router.
	{Name: "swaps", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: walletUses},
	{Name: "runs", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group | Send(work.Runs) | UseArtifactsRead},
	{Name: "approvals", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group},
	{Name: "artifacts", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group | UseArtifactsRead},
	{Name: "webhooks", MemoryMiB: 256, Timeout: 10 * time.Second, Uses: group}, // seals signing secrets
	{Name: "mcp", MemoryMiB: 512, Timeout: 29 * time.Second, Uses: group},      // opens the connections a tool call names
	{Name: "webhook-worker", MemoryMiB: 256, Timeout: 60 * time.Second,
		Uses: UseTable | Consume(work.Webhooks) | UseKMS, BatchSize: 10}, // KMS opens signing secrets
	// One run per invocation: a run can take minutes, and a batch would make
	// every other run in it wait for the slowest.
	{Name: "run-worker", MemoryMiB: 1024, Timeout: 5 * time.Minute,
		Uses: UseTable | Consume(work.Runs) | UseArtifactsWrite | Send(work.Webhooks) | UseKMS, BatchSize: 1}, // KMS opens the connections a run names
	// Deletes file objects that no record owns (an upload or a deletion
	// that died half-way); see files.Repo.Sweep.
	{Name: "file-sweeper", MemoryMiB: 256, Timeout: 5 * time.Minute, Uses: UseTable | UseFiles},
	// Releases credit holds a crash orphaned, each with its ledger entry,
	// once their holder's deadline and credits.GraceAfterDeadline passed;
	// see credits.Ledger.SweepHolds.
	{Name: "hold-sweeper", MemoryMiB: 256, Timeout: 2 * time.Minute, Uses: UseTable},
	// Advances resting trading orders each minute (the paper tape's
	// resolution) and publishes their trading.order.<status> events; its
	// timeout stays under the period so passes rarely overlap (an overlap
	// is harmless: every order write is conditional on its revision).
	{Name: "trading-recheck", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: UseTable | Send(work.Webhooks)},
	// One transfer per invocation: a snapshot or a validation of a 256 MiB
	// database takes minutes and its /tmp space. The timeout stays above
	// the worker's job timeout (databases.DefaultJobTimeout, 10 minutes).
	{Name: "databases-worker", MemoryMiB: 2048, Timeout: 12 * time.Minute,
		Uses: UseTable | Consume(work.Databases) | UseArchives | UseArchiveSecret | Send(work.Webhooks), BatchSize: 1, EphemeralMiB: 4096},
	// Signs, broadcasts and confirms wallet transactions. One message per
	// invocation, as for databases-worker: a message advances one
	// transaction against its chain's RPC endpoint, and a batch would make
	// the others wait for the slowest endpoint. Waiting for a receipt is a
	// delayed re-enqueue, never a sleep, so a minute covers the RPC calls.
	{Name: "wallets-worker", MemoryMiB: 512, Timeout: 60 * time.Second,
		Uses: walletUses | Consume(work.Wallets), BatchSize: 1},
	// Each minute, advances every wallet transaction not yet final whose
	// message was lost or dead-lettered, or whose credit settlement a crash
	// left pending (see wallets.Service.Recheck); its timeout stays under
	// the period, and an overlap is harmless (transaction writes are
	// conditional on their revision).
	{Name: "wallets-recheck", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: walletUses},
	// Fans out the webhook events a crash left in the outbox (see
	// webhooks.Repo.SweepOutbox); a request fans out its own at once.
	{Name: "webhook-outbox", MemoryMiB: 256, Timeout: 55 * time.Second, Uses: UseTable | Send(work.Webhooks)},
	// Usage counters from the audit events on the table's stream, off the
	// request path: 100 inserts per invocation, each batch one transaction
	// per 33 events (see audit.Rollup).
	{Name: "audit-rollup", MemoryMiB: 256, Timeout: 60 * time.Second,
		Uses: UseTable | ConsumeAuditStream, BatchSize: 100},
	// The audit events the HTTP functions ship in their logs, off the
	// request path: one conditional put per event (see audit.Ingest).
	{Name: "audit-ingest", MemoryMiB: 256, Timeout: 60 * time.Second, Uses: UseTable | IngestAuditLogs},
}

// consumerTimeout is the timeout of the queue's consumer, 0 when the
// function the declaration names does not consume it. A queue's visibility
// timeout must exceed it, or SQS hands a message to a second invocation
// while the first still works on it.
func consumerTimeout(q work.Queue) time.Duration {
	for _, f := range Functions {
		if f.Name == q.Consumer && f.Uses.Has(Consume(q)) {
			return f.Timeout
		}
	}
	return 0
}
