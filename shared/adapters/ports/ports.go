// Package ports is what the local process and the test harness offer the
// groups they serve together: the shared infrastructure (the table, every
// declared queue, the buckets, the envelope key, the clock, the logger,
// the webhook publisher) and the configuration. A group's constructor
// takes none of it: it takes its own Deps, exactly what it uses, and each
// group's Group wires those from Ports by name (docs/structure.md). A
// Lambda function builds its group's Deps from its environment without
// Ports. It also holds Work, what a group runs beside its operations, and
// links neither the HTTP kernel nor a group.
package ports

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
	"platformapi/shared/adapters/work"
)

// Publisher publishes a webhook event to a project's subscribers.
type Publisher interface {
	Publish(ctx context.Context, accountID, projectID, event string, data any) error
	// Outboxed is the event as members of the transaction that makes its
	// change, for a group that commits its writes itself, and the fan-out
	// to run once that transaction committed.
	Outboxed(accountID, projectID, event string, data any) ([]store.Op, func(context.Context), error)
}

// Ports are the process's shared infrastructure. A nil port is one this
// process lacks: a group answers 503 for what needs it, or leaves out the
// work that would use it.
type Ports struct {
	// Backend names the storage backend (embedded or aws) in /health.
	Backend string
	Store   store.Store
	// Now is the clock; nil is time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Sealer is the envelope key.
	Sealer envelope.Sealer
	// Queues are every queue of the deployment (api.Queues), by name.
	Queues map[string]queue.Queue
	// Artifacts holds runs' artifacts, Files uploaded files.
	Artifacts, Files blob.Bucket
	// Services reaches the managed services.
	Services upstream.Router
	// Events publishes webhook events (on the webhook queue).
	Events Publisher
	// Getenv reads the groups' configuration (docs/configuration.md); nil
	// is os.Getenv.
	Getenv func(string) string
	// Backoff is the wait before a worker's in-process retry n+1; nil is
	// each worker's own schedule. Tests shorten it.
	Backoff func(n int) time.Duration
}

// Work is what a group runs beside its operations: queue workers and
// scheduled passes, which work.Run runs in the local process and
// package lambdaedge runs on Lambda.
type Work struct {
	Workers []work.Worker
	Passes  []work.Pass
}

// Queue is declared queue q, or nil where this process has none.
func (p Ports) Queue(q work.Queue) queue.Queue { return p.Queues[q.Name] }

// Env is the configuration variable name.
func (p Ports) Env(name string) string { return Env(name, p.Getenv) }

// Env is configuration variable name read by getenv, or by os.Getenv
// where getenv is nil. The name comes first, as in os.Getenv: the
// configuration document finds what the code reads by it.
func Env(name string, getenv func(string) string) string {
	if getenv == nil {
		return os.Getenv(name)
	}
	return getenv(name)
}

// Clock is now, or time.Now where now is nil.
func Clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// Log is the logger of one worker or pass on l (none where l is nil).
func Log(l *slog.Logger, worker string) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.With("worker", worker)
}

// Worker is the worker named name (a queue's Consumer), for the function
// that runs only it.
func (w Work) Worker(name string) (work.Worker, error) {
	for _, wk := range w.Workers {
		if wk.Name == name {
			return wk, nil
		}
	}
	return work.Worker{}, fmt.Errorf("ports: no worker %q", name)
}

// Pass is the scheduled pass named name (a schedule's Function), for the
// function that runs only it.
func (w Work) Pass(name string) (func(context.Context) error, error) {
	for _, p := range w.Passes {
		if p.Name == name {
			return p.Run, nil
		}
	}
	return nil, fmt.Errorf("ports: no pass %q", name)
}
