// Package audit keeps one event per authenticated request and the
// usage counters rolled up from them: the Recorder takes an event on the
// request's hot path without a store round trip (a journal write embedded,
// a log line on Lambda; see Recorder), the Rollup and the journal's flusher
// add events to hourly counters off it (exactly once, whatever the
// delivery), and the Repo answers GET /audit-events and GET /usage with the
// visibility rules of docs/usage-and-audit.md: a key sees itself and its descendants, a
// project-bound key only its project. It never sees HTTP, and an event must never hold a body,
// a secret, a token or an Authorization header: only the fields below.
//
// Storage (single table):
//
//	aud#<acct>#<yyyymmdd>#<shard> | <eventId>   the event: doc JSON; expires
//	                                            Retention after it occurred;
//	                                            embedded, up to blockEvents
//	                                            events in one block under the
//	                                            greatest of their ids (block.go)
//	audroll#<eventId> | rolled                  the rollup marker: the event
//	                                            is counted; same expiry
//	audpending | <eventId>                      a settlement event not yet
//	                                            counted (embedded: the catch-up list)
//	use#<acct>#<yyyymmdd> | <hh>#<keyId>#<project|->#<service|->#<operation>
//	                                            one hour's counters of one key
//	                                            in one project, service and
//	                                            operation: requests, errors,
//	                                            micro; keyPath; expires with
//	                                            the hour's events
//
// Why shards: DynamoDB gives one partition at most 1,000 write units per
// second, and an event (under 1 KB) costs one. With the day alone in the
// partition key one busy account would cap at 1,000 requests per second and
// throttle itself; time-ordered sort keys also defeat DynamoDB's split for
// heat, which cannot split a partition whose writes all land at its end.
// Spreading each day over Shards partitions chosen at random lifts that to
// Shards × 1,000 per account (a single hot key spreads as well, which a
// shard by key id would not), and readers merge the Shards sorted partitions
// of a day newest first. 16 shards serve 16,000 events a second per account
// (see docs/storage-design.md); the price is on the reader's side, a day
// being 16 small queries.
package audit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/catalog"
)

// Retention is how long events (and the usage counted from them) are kept.
const Retention = 90 * 24 * time.Hour

// Shards is how many partitions one account's day of events is spread over.
// Readers must know every shard written: it may grow (the old shards are
// among the new), never shrink without a data migration.
const Shards = 16

// Event is one authenticated request as the audit log shows it. Everything
// a client sees is in the JSON fields; the rest is what visibility and usage
// need and is never rendered.
type Event struct {
	ID                 string    `json:"id" doc:"aud_…, sortable by occurrence"`
	OccurredAt         time.Time `json:"occurredAt"`
	RequestID          string    `json:"requestId"`
	ProjectID          *string   `json:"projectId" doc:"The request's project; null at account level"`
	KeyID              string    `json:"keyId"`
	Operation          string    `json:"operation" doc:"Operation id, refined to services.invoke.<serviceId>.<operationId> for invokes"`
	Method             string    `json:"method"`
	Path               string    `json:"path"`
	Status             int       `json:"status"`
	Code               *string   `json:"code" doc:"The error code of a failed request, null on success"`
	ChargedCredits     float64   `json:"chargedCredits"`
	EndUser            *string   `json:"endUser" doc:"As sent, a pseudonym or null, by the key's privacy tier"`
	IdempotentReplayed bool      `json:"idempotentReplayed"`

	// AccountID owns the event.
	AccountID string `json:"-"`
	// KeyPath is the calling key's chain, root first, KeyID last: the keys
	// that may see the event.
	KeyPath []string `json:"-"`
	// ServiceID is the managed service the request reached, "" for none.
	ServiceID string `json:"-"`
	// ChargedMicro is the charge in micro-credits; ChargedCredits renders it.
	ChargedMicro int64 `json:"-"`

	// named: the id was given by Name, not drawn at random.
	named bool
}

// Name gives the event the id its request and occurrence name, as a
// shipped event's is: an event that may be written twice (by its request,
// and by a replay of its answer that cannot know whether the request's
// process lived to write it) is then one item, stored once and counted
// once.
func (e *Event) Name(requestID string, at time.Time) {
	e.RequestID, e.OccurredAt = requestID, at.UTC().Truncate(time.Millisecond)
	e.ID, e.named = eventID(e.OccurredAt, requestID), true
}

// stored is an event as kept: the public fields plus the internal ones.
type stored struct {
	Event
	Account      string   `json:"accountId"`
	Path         []string `json:"keyPath"`
	Service      string   `json:"serviceId,omitempty"`
	ChargedMicro int64    `json:"chargedMicro"`
}

func (e *Event) setCharged(micro int64) {
	e.ChargedMicro, e.ChargedCredits = micro, float64(micro)/catalog.MicroPerCredit
}

// sees reports whether v may see an event of the key path and project:
// the viewer is on the caller's chain (itself or an ancestor), and a
// project-bound viewer sees only its project.
func (v Viewer) sees(keyPath []string, projectID string) bool {
	return slices.Contains(keyPath, v.keyID()) && (v.ProjectID == "" || projectID == v.ProjectID)
}

// Viewer is who reads events or usage: its account, its key chain (root
// first, the viewer last) and the project it is bound to ("" at account level).
type Viewer struct {
	AccountID string
	KeyPath   []string
	ProjectID string
}

func (v Viewer) keyID() string { return v.KeyPath[len(v.KeyPath)-1] }

func (v Viewer) check() error {
	if v.AccountID == "" || len(v.KeyPath) == 0 {
		return fmt.Errorf("audit: viewer needs an account and a key path")
	}
	return nil
}

const dayLayout = "20060102"

func dayOf(t time.Time) string { return t.UTC().Format(dayLayout) }

func eventPK(accountID, day string, shard int) string {
	return "aud#" + accountID + "#" + day + "#" + strconv.Itoa(shard)
}

func markerKey(eventID string) store.Key { return store.Key{PK: "audroll#" + eventID, SK: "rolled"} }

const pendingPK = "audpending"

func pendingKey(eventID string) store.Key { return store.Key{PK: pendingPK, SK: eventID} }

func expiry(occurredAt time.Time) int64 { return occurredAt.Add(Retention).Unix() }

// encode is the event's item in the given shard.
func encode(e *Event, shard int) store.Item {
	it := store.NewItem(store.Key{PK: eventPK(e.AccountID, dayOf(e.OccurredAt), shard), SK: e.ID})
	it.SetDoc(toStored(e))
	it[store.AttrExpiresAt] = expiry(e.OccurredAt)
	return it
}

func toStored(e *Event) stored {
	return stored{Event: *e, Account: e.AccountID, Path: e.KeyPath, Service: e.ServiceID, ChargedMicro: e.ChargedMicro}
}

// fromStored is the event a stored document holds, or an error when it
// lacks what every event has.
func fromStored(s stored) (Event, error) {
	e := s.Event
	e.AccountID, e.KeyPath, e.ServiceID = s.Account, s.Path, s.Service
	e.setCharged(s.ChargedMicro)
	if e.ID == "" || e.AccountID == "" || len(e.KeyPath) == 0 {
		return Event{}, fmt.Errorf("incomplete event")
	}
	return e, nil
}

// IsEventPK reports whether a partition key of the table holds audit events
// (and not markers, counters or anything else sharing the table and its
// stream).
func IsEventPK(pk string) bool { return strings.HasPrefix(pk, "aud#") }

// DecodeItem reads an audit event item back, as the stream adapter and the
// readers see it.
func DecodeItem(it store.Item) (Event, error) {
	var s stored
	if err := it.Doc(&s); err != nil {
		return Event{}, fmt.Errorf("audit: decode %s: %w", it.Key(), err)
	}
	e, err := fromStored(s)
	if err != nil {
		return Event{}, fmt.Errorf("audit: decode %s: %w", it.Key(), err)
	}
	return e, nil
}

// Repo answers the audit and usage queries.
type Repo struct {
	st    store.Store
	now   func() time.Time
	flush func(context.Context) error
}

// ReadingAfter makes every read first call flush (the embedded recorder's
// Flush): a request's event is then listed and counted as soon as the
// request is answered, though the recorder commits it later. Nil reads
// what the store holds.
func (r *Repo) ReadingAfter(flush func(context.Context) error) *Repo {
	r.flush = flush
	return r
}

// settle runs the flush before a read.
func (r *Repo) settle(ctx context.Context) error {
	if r.flush == nil {
		return nil
	}
	return r.flush(ctx)
}

// NewRepo builds the read side; now defaults to time.Now.
func NewRepo(st store.Store, now func() time.Time) *Repo {
	if now == nil {
		now = time.Now
	}
	return &Repo{st: st, now: now}
}
