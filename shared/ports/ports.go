// Package ports is what a process offers every endpoint group: the shared
// infrastructure (the table, every declared queue, the buckets,
// the envelope key, the clock, the logger, the webhook publisher) and the
// configuration, from which each group builds its part (docs/structure.md).
// The local process, the test harness and the OpenAPI generator fill one
// Ports and hand it to every group of the list; a group picks what it
// needs. It links neither the HTTP kernel nor a group, so that a worker's
// function builds its work from the same Ports without either.
package ports

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"platformapi/shared/blob"
	"platformapi/shared/envelope"
	"platformapi/shared/queue"
	"platformapi/shared/store"
	"platformapi/shared/upstream"
	"platformapi/shared/work"
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
	// Resources are what the process built for one group beyond the shared
	// infrastructure (a group's service on its own storage, the chains a
	// group reaches): Resource finds one by its type.
	Resources []any
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
func (p Ports) Env(name string) string {
	if p.Getenv == nil {
		return os.Getenv(name)
	}
	return p.Getenv(name)
}

// Clock is Now, or time.Now.
func (p Ports) Clock() func() time.Time {
	if p.Now == nil {
		return time.Now
	}
	return p.Now
}

// Log is the logger of one worker or pass.
func (p Ports) Log(worker string) *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger.With("worker", worker)
}

// Resource is the first of p.Resources of type T, if any.
func Resource[T any](p Ports) (T, bool) {
	for _, r := range p.Resources {
		if v, ok := r.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
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
