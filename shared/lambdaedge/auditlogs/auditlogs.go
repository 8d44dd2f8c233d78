// Package auditlogs adapts a CloudWatch Logs subscription to the audit
// ingest: it unpacks a delivery (base64 of gzip of JSON), keeps the lines
// that hold a shipped event, completes each event's account and ancestors
// from its key's record and hands them to audit.Ingest. It is the only
// audit code that sees this AWS type. It is an edge like httpedge, beside
// it: reading keys here keeps the audit domain below keys and credits.
package auditlogs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/keys"
)

// maxChains bounds the key chains an Ingester keeps; past it, it starts
// over, reading each key again once.
const maxChains = 1 << 16

// Ingester stores the events of deliveries. A line names its key, not the
// key's account and ancestors (audit.Fold): the ingest reads each key's
// record once and keeps its chain for the next deliveries, since a key's
// account and ancestors never change and its record is never deleted.
type Ingester struct {
	st     store.Store
	mu     sync.Mutex
	chains map[string]audit.Chain
}

// New returns an ingester that stores events and reads keys on st.
func New(st store.Store) *Ingester {
	return &Ingester{st: st, chains: map[string]audit.Chain{}}
}

// Handle stores the events of one delivery. CloudWatch Logs invokes the
// function asynchronously: an error makes Lambda retry the delivery, then
// send it to the function's dead-letter queue, and a retry stores nothing
// twice (audit.Ingest). A line that is not an event, or names a key that
// has no record, is logged and skipped: the filter pattern lets only
// events through and records are never deleted, so it is a bug, not a loss
// a retry could mend.
func (in *Ingester) Handle(ctx context.Context, ev events.CloudwatchLogsEvent) error {
	data, err := ev.AWSLogs.Parse()
	if err != nil {
		return fmt.Errorf("auditlogs: %w", err)
	}
	if data.MessageType == "CONTROL_MESSAGE" {
		return nil
	}
	evs := make([]audit.Event, 0, len(data.LogEvents))
	shards := make([]int, 0, len(data.LogEvents))
	for _, le := range data.LogEvents {
		e, shard, ok := audit.Shipped(le.Message)
		if !ok {
			slog.Warn("auditlogs: a delivered line holds no audit event", "logGroup", data.LogGroup, "id", le.ID)
			continue
		}
		evs, shards = append(evs, e), append(shards, shard)
	}
	chains, err := in.chainsOf(ctx, audit.Unresolved(evs))
	if err != nil {
		return err
	}
	evs, shards, missing := audit.Resolve(evs, shards, chains)
	if len(missing) > 0 {
		slog.Warn("auditlogs: delivered events name keys without a record", "logGroup", data.LogGroup, "keys", missing)
	}
	return audit.Ingest(ctx, in.st, evs, shards)
}

// chainsOf is the chain of every key of ids that has a record: those
// already read, and the others in one batched read.
func (in *Ingester) chainsOf(ctx context.Context, ids []string) (map[string]audit.Chain, error) {
	out := make(map[string]audit.Chain, len(ids))
	var unread []string
	in.mu.Lock()
	for _, id := range ids {
		if c, ok := in.chains[id]; ok {
			out[id] = c
		} else {
			unread = append(unread, id)
		}
	}
	in.mu.Unlock()
	if len(unread) == 0 {
		return out, nil
	}
	loaded, err := keys.Load(ctx, in.st, unread)
	if err != nil {
		return nil, fmt.Errorf("auditlogs: %w", err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.chains)+len(loaded) > maxChains {
		clear(in.chains)
	}
	for id, k := range loaded {
		c := audit.Chain{AccountID: k.AccountID, Ancestors: k.Ancestors}
		in.chains[id], out[id] = c, c
	}
	return out, nil
}
