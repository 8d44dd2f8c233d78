package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
)

// Counter attributes of a usage item.
const (
	attrRequests = "requests"
	attrErrors   = "errors"
	attrMicro    = "micro"
	attrKeyPath  = "keyPath"
	attrKeyID    = "keyId"
	attrProject  = "projectId"
	attrService  = "serviceId"
	attrOp       = "operation"
)

// Rollup adds audit events to the hourly usage counters, each event exactly
// once however often it is delivered: one transaction adds a batch's events
// to their counters and puts one marker per event on the condition that it
// does not exist yet. A redelivered event finds its marker and is skipped;
// a crash before the commit leaves nothing, after it everything.
type Rollup struct {
	st      store.Store
	pending bool
}

// RollupOption configures a Rollup.
type RollupOption func(*Rollup)

// RollupPending makes the rollup also take counted events off the embedded
// recorder's pending list, in the same transaction.
func RollupPending() RollupOption { return func(r *Rollup) { r.pending = true } }

// NewRollup builds a rollup on the store.
func NewRollup(st store.Store, opts ...RollupOption) *Rollup {
	r := &Rollup{st: st}
	for _, o := range opts {
		o(r)
	}
	return r
}

// chunkEvents keeps one transaction within store.MaxTransactItems: at most
// three members per event (marker, pending entry, counter).
const chunkEvents = store.MaxTransactItems / 3

// Apply counts events and returns how many of them, from the first, are
// now counted (or were already). On an error the rest must be delivered
// again; nothing is counted twice when the counted ones are too. This is the
// entry the stream adapter (auditstream) calls with a decoded batch.
//
// The batch is cut into transactions in the order of its counters, not of
// its events: every counter of one account-day lives in one partition, and
// each transaction writes each counter it touches once, so a transaction
// of one or two counters instead of a dozen is what keeps a busy account's
// rollup within that partition's write units (docs/storage-design.md).
func (r *Rollup) Apply(ctx context.Context, evs []Event) (int, error) {
	keys := make([]store.Key, len(evs))
	order := make([]int, len(evs))
	for i := range evs {
		keys[i], order[i] = counterKey(&evs[i]), i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].PK, keys[b].PK), cmp.Compare(keys[a].SK, keys[b].SK))
	})
	counted := make([]bool, len(evs))
	for done := 0; done < len(order); {
		chunk := order[done:min(len(order), done+chunkEvents)]
		part := make([]Event, len(chunk))
		for i, at := range chunk {
			part[i] = evs[at]
		}
		if err := r.applyChunk(ctx, part); err != nil {
			return countedPrefix(counted), err
		}
		for _, at := range chunk {
			counted[at] = true
		}
		done += len(chunk)
	}
	return len(evs), nil
}

// countedPrefix is how many events from the first are counted.
func countedPrefix(counted []bool) int {
	n := 0
	for n < len(counted) && counted[n] {
		n++
	}
	return n
}

func (r *Rollup) applyChunk(ctx context.Context, evs []Event) error {
	markers := make([]store.Key, len(evs))
	for i := range evs {
		markers[i] = markerKey(evs[i].ID)
	}
	seen, err := r.st.BatchGet(ctx, markers)
	if err != nil {
		return fmt.Errorf("audit: rollup: %w", err)
	}
	var fresh []Event
	for i, e := range evs {
		if _, counted := seen[markers[i].String()]; !counted && !dupIn(fresh, e.ID) {
			fresh = append(fresh, e)
		}
	}
	for {
		ops := r.ops(fresh, evs)
		if len(ops) == 0 {
			return nil
		}
		err := r.st.Transact(ctx, ops)
		var tx *store.TxError
		if errors.As(err, &tx) && tx.Index < len(fresh) {
			// Another delivery counted this event between our read and
			// our commit: drop it and count the others.
			fresh = append(fresh[:tx.Index], fresh[tx.Index+1:]...)
			continue
		}
		if err != nil {
			return fmt.Errorf("audit: rollup: %w", err)
		}
		return nil
	}
}

func dupIn(evs []Event, id string) bool {
	for _, e := range evs {
		if e.ID == id {
			return true
		}
	}
	return false
}

// ops is the transaction counting fresh: the markers first (so a failed
// condition's index names the event), then the pending entries of every
// event of the chunk, then one update per counter.
func (r *Rollup) ops(fresh, all []Event) []store.Op {
	ops := make([]store.Op, 0, 3*len(all))
	for _, e := range fresh {
		m := store.NewItem(markerKey(e.ID))
		m[store.AttrExpiresAt] = expiry(e.OccurredAt)
		ops = append(ops, store.PutOp(m, store.NotExists()))
	}
	if len(fresh) == 0 && !r.pending {
		return nil
	}
	if r.pending {
		for _, e := range all {
			if !dupInKeys(ops, pendingKey(e.ID)) {
				ops = append(ops, store.DeleteOp(pendingKey(e.ID)))
			}
		}
	}
	return append(ops, counterOps(fresh)...)
}

// counterOps adds each event to its hourly counter, one update per counter.
func counterOps(evs []Event) []store.Op {
	type counter struct {
		of                      counterOf
		e                       *Event // the first event counted: the counter takes its attributes
		requests, errors, micro int64
	}
	var counters []*counter
	// Events are grouped by what their counter key is made of, which
	// costs no allocation, and the key is built once per counter: the
	// flusher counts thousands of events into a few counters per commit.
	index := map[counterOf]*counter{}
	for i := range evs {
		e := &evs[i]
		of := counterFor(e)
		c := index[of]
		if c == nil {
			c = &counter{of: of, e: e}
			index[of] = c
			counters = append(counters, c)
		}
		c.requests++
		if e.Status >= 400 {
			c.errors++
		}
		c.micro += e.ChargedMicro
	}
	ops := make([]store.Op, 0, len(counters))
	for _, c := range counters {
		add := map[string]int64{attrRequests: c.requests, attrMicro: c.micro}
		if c.errors > 0 {
			add[attrErrors] = c.errors
		}
		ops = append(ops, store.UpdateOp(c.of.key(), store.Update{Set: counterAttrs(c.e), Add: add}))
	}
	return ops
}

// counterOf is what an event's counter key is made of (key): events with
// equal ones are counted in one counter.
type counterOf struct {
	account, keyID, project, service, operation string
	hour                                        int64 // since 1970, UTC: the day and the hour
}

func counterFor(e *Event) counterOf {
	return counterOf{
		account: e.AccountID, keyID: e.KeyID, project: projectOf(e), service: e.ServiceID, operation: e.Operation,
		hour: e.OccurredAt.Unix() / 3600,
	}
}

func dupInKeys(ops []store.Op, k store.Key) bool {
	for _, o := range ops {
		if o.Key == k {
			return true
		}
	}
	return false
}

const hourLayout = "15"

// counterKey is the event's counter (counterOf.key).
func counterKey(e *Event) store.Key { return counterFor(e).key() }

// key is the counter's key: its account and day, then the hour, the caller
// key, project, service and operation.
func (c counterOf) key() store.Key {
	hour := time.Unix(c.hour*3600, 0)
	return store.Key{
		PK: usagePK(c.account, dayOf(hour)),
		SK: strings.Join([]string{hour.UTC().Format(hourLayout), c.keyID, orDash(c.project), orDash(c.service), c.operation}, "#"),
	}
}

func usagePK(accountID, day string) string { return "use#" + accountID + "#" + day }

// counterAttrs are the dimensions the reader filters and groups by, so it
// never parses the sort key; the key path carries the caller's ancestry for
// the viewer rule. The counter lives as long as the hour's events.
func counterAttrs(e *Event) map[string]any {
	hourEnd := e.OccurredAt.UTC().Truncate(time.Hour).Add(time.Hour)
	set := map[string]any{
		attrKeyPath: strings.Join(e.KeyPath, "/"), attrKeyID: e.KeyID, attrOp: e.Operation,
		store.AttrExpiresAt: expiry(hourEnd),
	}
	if p := projectOf(e); p != "" {
		set[attrProject] = p
	}
	if e.ServiceID != "" {
		set[attrService] = e.ServiceID
	}
	return set
}

func projectOf(e *Event) string {
	if e.ProjectID == nil {
		return ""
	}
	return *e.ProjectID
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
