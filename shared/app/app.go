// Package app assembles the local process from its environment: the
// storage backend (embedded, or AWS with BACKEND=aws), the credit-token
// signing key, every endpoint group and every queue worker and scheduled
// pass package work declares (Runtime.Work). functions/local, the
// benchmarks and the Lambda harness tests use it; no Lambda links it (each
// function's main builds its own AWS adapters).
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/blob/fsblob"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/envelope/localkey"
	"platformapi/shared/adapters/ports"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/queue/storequeue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/adapters/work"
	"platformapi/shared/api"
	"platformapi/shared/base/textlog"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/auditpoll"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/services/superbrain"
	"platformapi/shared/groups/webhooks"
	"platformapi/shared/platform"
)

// Config is read from the environment (docs/configuration.md).
type Config struct {
	Backend         string // embedded (default) or aws
	DataDir         string // embedded storage and the local signing key
	CreateResources bool   // aws: create missing tables, buckets, queues, keys
	LogLevel        slog.Level
	// RequestTimeout is every request's deadline (REQUEST_TIMEOUT, default
	// 30s); a dead process's idempotency claim expires 5 s after it. Tests
	// that kill the server shorten it so that retries resume sooner.
	RequestTimeout time.Duration
	// HoldGrace is how long after its holder's deadline a credit hold
	// still held is released as orphaned (HOLD_GRACE, default
	// credits.GraceAfterDeadline); the local server sweeps every minute, or
	// every HoldGrace when shorter.
	HoldGrace time.Duration
	// RunTimeout bounds one attempt of a durable run (RUN_TIMEOUT, default
	// runs.DefaultTimeout); a run a dead process was executing is taken up
	// again about four times this later (its message's visibility).
	RunTimeout time.Duration
	// NoMetrics leaves the CloudWatch metrics off the access lines
	// (api.Config.NoMetrics): set outside Lambda unless LOG_EMF=true, since
	// only CloudWatch Logs reads them.
	NoMetrics bool
	// BlockDeflater compresses the embedded audit store's blocks
	// (audit.WithDeflater); nil is compress/flate. functions/local injects
	// audit/fastdeflate's, which the Lambda functions, linking this package
	// but never writing a block, leave out of their bootstraps.
	BlockDeflater audit.NewDeflater
}

// ConfigFromEnv reads BACKEND, DATA_DIR, LOG_LEVEL, LOG_EMF,
// REQUEST_TIMEOUT, HOLD_GRACE and RUN_TIMEOUT.
func ConfigFromEnv() (Config, error) {
	c := Config{Backend: os.Getenv("BACKEND"), DataDir: os.Getenv("DATA_DIR"),
		NoMetrics: os.Getenv("AWS_LAMBDA_FUNCTION_NAME") == "" && os.Getenv("LOG_EMF") != "true"}
	if c.Backend == "" {
		c.Backend = "embedded"
	}
	if c.DataDir == "" {
		c.DataDir = ".data"
	}
	_ = c.LogLevel.UnmarshalText([]byte(strings.ToUpper(os.Getenv("LOG_LEVEL"))))
	for name, d := range map[string]*time.Duration{"REQUEST_TIMEOUT": &c.RequestTimeout, "HOLD_GRACE": &c.HoldGrace, "RUN_TIMEOUT": &c.RunTimeout} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed <= 0 {
			return c, fmt.Errorf("app: %s=%q: want a positive duration such as 30s", name, v)
		}
		*d = parsed
	}
	return c, nil
}

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return 30 * time.Second
}

// Logger is the process's logger on standard error: readable text at a
// terminal or with LOG_FORMAT=text, JSON otherwise and always on Lambda
// (textlog.Choose).
func (c Config) Logger() *slog.Logger {
	return slog.New(textlog.Choose(os.Stderr, c.LogLevel, os.Getenv))
}

// Runtime holds a process's long-lived dependencies, built once.
type Runtime struct {
	Config Config
	Store  store.Store
	// SharedReads is the embedded store's uncopied reads, which the kernel
	// authenticates through; nil on AWS.
	SharedReads store.SharedReader
	Signer      *credittoken.Signer // nil where tokens cannot be redeemed
	// Queues are the deployment's queues (platform.Queues), by name.
	Queues    map[string]queue.Queue
	Artifacts blob.Bucket
	Sealer    envelope.Sealer
	// Audit records every authenticated request's event: embedded, it also
	// rolls usage up in process (and first counts what a previous process
	// left pending); on AWS, the table's stream does (read by the
	// audit-rollup function, or by this process's Work). Nil records none.
	Audit *audit.Recorder
	// AWS is the AWS environment in BACKEND=aws (its Calls counter counts
	// storage round trips); nil in embedded mode.
	AWS     *awsenv.Env
	closers []func() error

	// Files holds uploaded files (DATA_DIR/files, or FILES_BUCKET).
	Files blob.Bucket
	// Services are the managed services this deployment reaches, the
	// built-in ones in process: built once with the store, so that the
	// server and the work (each given Ports) reach the same ones.
	Services upstream.Router
	// Resources are what the process built for single groups (the managed
	// databases' service and archive key; the EVM chains of managed wallets
	// and swaps, which the local command adds before NewServer).
	Resources platform.Resources

	listOnce sync.Once
	list     []api.NewGroup
}

// Queue is declared queue q, or nil where this process has none.
func (r *Runtime) Queue(q work.Queue) queue.Queue { return r.Queues[q.Name] }

// Close releases storage cleanly (bbolt must be closed to release its lock).
func (r *Runtime) Close() error {
	var first error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Open builds the runtime for the configured backend.
func Open(ctx context.Context, c Config) (*Runtime, error) {
	queues, err := platform.Queues()
	if err != nil {
		return nil, err
	}
	rt := &Runtime{Config: c, Queues: map[string]queue.Queue{}}
	switch c.Backend {
	case "embedded":
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return nil, err
		}
		st, err := boltstore.Open(filepath.Join(c.DataDir, "platform.db"))
		if err != nil {
			return nil, fmt.Errorf("app: open embedded store: %w", err)
		}
		rt.Store, rt.SharedReads = st, st
		rt.closers = append(rt.closers, st.Close)
		sealer, err := localkey.Open(filepath.Join(c.DataDir, "master.key"))
		if err != nil {
			_ = rt.Close()
			return nil, fmt.Errorf("app: local master key: %w", err)
		}
		rt.Sealer = sealer
		// Durable queues in the embedded store: work queued when the
		// server stops is delivered when it starts again.
		for _, q := range queues {
			rt.Queues[q.Name] = embeddedQueue(st, q)
		}
		artifacts, err := fsblob.Open(filepath.Join(c.DataDir, "artifacts"))
		if err != nil {
			_ = rt.Close()
			return nil, fmt.Errorf("app: artifacts: %w", err)
		}
		rt.Artifacts = artifacts
		rt.closers = append(rt.closers, artifacts.Close)
		filesBucket, err := fsblob.Open(filepath.Join(c.DataDir, "files"))
		if err != nil {
			_ = rt.Close()
			return nil, fmt.Errorf("app: files: %w", err)
		}
		rt.Files = filesBucket
		rt.closers = append(rt.closers, filesBucket.Close)
		var opts []audit.EmbeddedOption
		if c.BlockDeflater != nil {
			opts = append(opts, audit.WithDeflater(c.BlockDeflater))
		}
		rec, err := audit.NewEmbeddedRecorder(st, nil, filepath.Join(c.DataDir, "audit"), opts...)
		if err != nil {
			_ = rt.Close()
			return nil, err
		}
		rt.Audit = rec
		rt.closers = append(rt.closers, func() error { rec.Close(); return nil })
	case "aws":
		if err := openAWS(ctx, c, rt, queues); err != nil {
			_ = rt.Close()
			return nil, err
		}
		rt.Audit = audit.NewRecorder(rt.Store, nil)
	default:
		return nil, fmt.Errorf("app: unknown BACKEND %q (embedded or aws)", c.Backend)
	}
	rt.Services = superbrain.Router(rt.Store, time.Now)
	if err := openDatabases(ctx, c, rt); err != nil {
		_ = rt.Close()
		return nil, err
	}
	signer, err := loadSigner(ctx, c, rt)
	switch {
	case errors.Is(err, errNoSigningKey):
	case err != nil:
		_ = rt.Close()
		return nil, err
	}
	rt.Signer = signer
	return rt, nil
}

// embeddedQueue is declared queue q with its dead-letter queue (name-dlq)
// after q.MaxReceives receives, as on AWS.
func embeddedQueue(st store.Store, q work.Queue) queue.Queue {
	return storequeue.New(st, q.Name, storequeue.WithDeadLetter(storequeue.New(st, q.Name+"-dlq"), q.MaxReceives))
}

// Signer loads only the credit-token signing key, for mint-credit-token,
// which must work while the server holds the storage open.
func Signer(ctx context.Context, c Config) (*credittoken.Signer, error) {
	return loadSigner(ctx, c, &Runtime{Config: c})
}

func loadSigner(ctx context.Context, c Config, rt *Runtime) (*credittoken.Signer, error) {
	var seed []byte
	var err error
	switch arn := os.Getenv("CREDIT_TOKEN_SECRET_ARN"); {
	case c.Backend == "aws" && arn != "":
		seed, err = awsSigningSeed(ctx, arn)
	case inLambda():
		return nil, errNoSigningKey
	default:
		seed, err = credittoken.LoadOrCreateSeed(filepath.Join(c.DataDir, "credit-token.key"))
	}
	if err != nil {
		return nil, fmt.Errorf("app: credit-token signing key: %w", err)
	}
	return credittoken.NewSigner(seed)
}

// Ports are what the process offers every group: its storage, queues,
// buckets and key, its resources, and the environment as configuration
// (HOLD_GRACE and RUN_TIMEOUT as Config read them).
func (r *Runtime) Ports(logger *slog.Logger) ports.Ports {
	p := ports.Ports{
		Backend: r.Config.Backend, Store: r.Store, Logger: logger, Sealer: r.Sealer, Queues: r.Queues,
		Artifacts: r.Artifacts, Files: r.Files, Services: r.Services,
		Getenv: func(name string) string {
			switch {
			case name == "HOLD_GRACE" && r.Config.HoldGrace > 0:
				return r.Config.HoldGrace.String()
			case name == "RUN_TIMEOUT" && r.Config.RunTimeout > 0:
				return r.Config.RunTimeout.String()
			}
			return os.Getenv(name)
		},
	}
	if q := r.Queue(work.Webhooks); q != nil {
		p.Events = webhooks.NewRepo(webhooks.Config{Store: r.Store, Sealer: r.Sealer, Queue: q})
	}
	return p
}

// NewServer builds the HTTP API with every group, or only the given ones.
func (r *Runtime) NewServer(logger *slog.Logger, groups []string) (*api.Kernel, error) {
	var rec api.AuditRecorder // a nil *audit.Recorder must stay a nil interface
	if r.Audit != nil {
		rec = r.Audit
	}
	k, _, err := platform.New(api.Config{
		Store: r.Store, SharedReads: r.SharedReads, LocalLimits: r.Config.Backend == "embedded", CreditTokens: r.Signer, Logger: logger, Groups: groups,
		RequestTimeout: r.Config.requestTimeout(), Audit: rec, NoMetrics: r.Config.NoMetrics,
	}, r.groups(), r.Ports(logger))
	return k, err
}

// Work is every queue worker and scheduled pass of the local process: the
// work of every group, on the queues and storage the server uses;
// work.Run runs them. On AWS each is its own function (the declarations in
// package work say which).
func (r *Runtime) Work(logger *slog.Logger) ([]work.Worker, []work.Pass, error) {
	groups, err := api.Build(r.groups(), r.Ports(logger))
	if err != nil {
		return nil, nil, err
	}
	w := api.WorkOf(groups)
	if r.AWS != nil {
		w.Passes = append(w.Passes, r.usageRollup(logger))
	}
	return w.Workers, w.Passes, nil
}

// usageRollup reads the table's stream into the usage counters, as the
// audit-rollup function does on AWS: no event source mapping feeds this
// process.
func (r *Runtime) usageRollup(logger *slog.Logger) work.Pass {
	p := auditpoll.New(r.AWS.DynamoDB(), r.AWS.DynamoDBStreams(), r.AWS.Names.Table, audit.NewRollup(r.Store), logger)
	return p.Pass(time.Second)
}

// groups are every group on the process's resources, built once per
// process: managed wallets and swaps wire once for the server and the
// work together.
func (r *Runtime) groups() []api.NewGroup {
	r.listOnce.Do(func() { r.list = platform.With(r.Resources) })
	return r.list
}
