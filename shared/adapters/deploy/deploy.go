// Package deploy declares what an endpoint group deploys beside its code:
// its Lambda functions (memory, timeout, batch size, /tmp, schedule, and
// what each touches) and its queues. A group returns its declaration with the rest of
// what it contributes (api.Group's Deploy); infra (infra/stacks) derives
// every function's resource, role, grants, environment, routes, log group
// and alarms from it, and awsenv, the embedded backend and
// docs/configuration.md read the same queues (docs/structure.md). It links
// neither CDK nor the HTTP kernel, so that the group packages a Lambda main
// links may declare it.
package deploy

import (
	"slices"
	"time"

	"platformapi/shared/adapters/work"
)

// Unit is what one group deploys: the queues it declares (beyond those
// package work declares) and its functions.
type Unit struct {
	Queues    []work.Queue
	Functions []Function
}

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
	Uses    Uses
	// BatchSize is how many queue messages a worker takes per invocation.
	BatchSize int
	// EphemeralMiB is the size of /tmp (Lambda's default 512 when 0): the
	// databases functions keep SQLite files and archives there.
	EphemeralMiB int
	// Schedule is how often a rule invokes the function (none when zero):
	// the pass it runs reads the same declaration for the local process's
	// loop, so the two cannot drift apart.
	Schedule work.Schedule
}

// Use is one resource a function touches, and how. Each grants exactly one
// permission and passes exactly the environment variables that go with it,
// so a function can never see a resource it was not granted, nor be granted
// one it is not told about.
type Use string

const (
	// UseTable: read/write items of the single table (TABLE_NAME).
	UseTable Use = "table"
	// UseFiles: read/write the files bucket (FILES_BUCKET).
	UseFiles Use = "files"
	// UseArchives: read/write the database archives bucket (ARCHIVES_BUCKET).
	UseArchives Use = "archives"
	// UseArtifactsRead: read the artifacts bucket (ARTIFACTS_BUCKET).
	UseArtifactsRead Use = "artifacts-read"
	// UseArtifactsWrite: read/write the artifacts bucket (ARTIFACTS_BUCKET).
	UseArtifactsWrite Use = "artifacts-write"
	// UseKMS: encrypt/decrypt with the envelope key (KMS_KEY_ID).
	UseKMS Use = "kms"
	// UseCreditSecret: read the credit-token signing seed (CREDIT_TOKEN_SECRET_ARN).
	UseCreditSecret Use = "credit-secret"
	// UseX402: the x402 payment settings (X402_*); no AWS permission.
	UseX402 Use = "x402"
	// UseArchiveSecret: read the database archive signing seed
	// (ARCHIVE_SIGNING_SECRET_ARN).
	UseArchiveSecret Use = "archive-secret"
	// ConsumeAuditStream: triggered by the table's stream, audit events'
	// inserts only (no environment; reads the stream, on failure sends to
	// the audit rollup's dead-letter queue).
	ConsumeAuditStream Use = "consume-audit-stream"
	// UseChains: the JSON-RPC endpoint of each configured chain
	// (RPC_URL_<chainId>, from the rpcUrls setting); no AWS permission.
	UseChains Use = "chains"
	// UseLiFi: the swap router's endpoint and key (LIFI_BASE_URL,
	// LIFI_API_KEY); no AWS permission.
	UseLiFi Use = "lifi"
	// IngestAuditLogs: invoked by a subscription filter on every HTTP
	// function's log group with the audit event lines (no environment;
	// a delivery that fails after the asynchronous retries goes to the
	// audit ingest's dead-letter queue).
	IngestAuditLogs Use = "ingest-audit-logs"
)

// Send: send to declared queue q (<Env>_QUEUE_URL).
func Send(q work.Queue) Use { return Use("send:" + q.Name) }

// Consume: triggered by declared queue q (<Env>_QUEUE_URL); only its
// Consumer may.
func Consume(q work.Queue) Use { return Use("consume:" + q.Name) }

// Uses is what one function touches.
type Uses []Use

// Has reports whether u holds o.
func (u Uses) Has(o Use) bool { return slices.Contains(u, o) }

// With is u and more, a new set: the shared sets below stay as declared.
func (u Uses) With(more ...Use) Uses { return append(slices.Clone(u), more...) }

// HTTP is what every HTTP group except public touches: it emits webhook
// events and reads the table, and holds the envelope key, because its
// idempotency records keep an HMAC of each request under a sealed key,
// never a plain digest a reader of the table could test guesses against (a
// connection's password, say).
var HTTP = Uses{UseTable, Send(work.Webhooks), UseKMS}
