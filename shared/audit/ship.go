package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"platformapi/shared/store"
)

// On AWS the event leaves the request's critical path through the log: the
// function writes it as one JSON line on its output, which Lambda sends to
// CloudWatch Logs; a subscription filter delivers the lines that hold an
// event to the audit-ingest function, which puts each event's item (Ingest).
// The table's stream then counts it as it counts any event. A request pays a
// write(2) instead of a PutItem round trip; the event is listed seconds
// later, once the log has delivered it.

// shippedLine is an event's log line: the field ShipFilterPattern selects.
type shippedLine struct {
	Audit shipped `json:"auditEvent"`
}

// shipped is an event as its log line carries it: short names and nothing
// derived (the key id is the path's last, the credits the micro-credits),
// because CloudWatch Logs bills every byte it ingests.
type shipped struct {
	ID       string   `json:"id"`
	At       int64    `json:"at"` // Unix milliseconds
	Request  string   `json:"rq"`
	Project  *string  `json:"pj,omitempty"`
	Op       string   `json:"op"`
	Method   string   `json:"m"`
	Path     string   `json:"p"`
	Status   int      `json:"s"`
	Code     *string  `json:"c,omitempty"`
	EndUser  *string  `json:"eu,omitempty"`
	Replayed bool     `json:"r,omitempty"`
	Account  string   `json:"a"`
	Keys     []string `json:"k"`
	Service  string   `json:"sv,omitempty"`
	Micro    int64    `json:"mc,omitempty"`
	Shard    int      `json:"sh"`
}

// ShipFilterPattern is the CloudWatch Logs subscription filter that selects
// the lines of shipped events.
const ShipFilterPattern = `{ $.auditEvent.id = "aud_*" }`

// NewShippingRecorder records each event as one line on w (a Lambda
// function's standard output) for Ingest to store.
func NewShippingRecorder(w io.Writer, now func() time.Time) *Recorder {
	r := NewRecorder(nil, now)
	r.ship = &shipper{w: w}
	return r
}

// shipper serializes whole lines onto the output, one write each.
type shipper struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *shipper) send(e Event) error {
	line, err := json.Marshal(shippedLine{Audit: shipped{
		ID: e.ID, At: e.OccurredAt.UnixMilli(), Request: e.RequestID, Project: e.ProjectID, Op: e.Operation,
		Method: e.Method, Path: e.Path, Status: e.Status, Code: e.Code, EndUser: e.EndUser, Replayed: e.IdempotentReplayed,
		Account: e.AccountID, Keys: e.KeyPath, Service: e.ServiceID, Micro: e.ChargedMicro, Shard: rand.IntN(Shards),
	}})
	if err != nil {
		return fmt.Errorf("audit: ship: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit: ship: %w", err)
	}
	return nil
}

// Shipped decodes the event of a shipped log line; ok is false for any
// other line. The line may carry a prefix before the JSON (a runtime's
// timestamp and request id).
func Shipped(message string) (e Event, shard int, ok bool) {
	raw := []byte(message)
	if i := bytes.Index(raw, []byte(`{"auditEvent"`)); i > 0 {
		raw = raw[i:]
	}
	var l shippedLine
	a := &l.Audit
	if json.Unmarshal(raw, &l) != nil || a.Shard < 0 || a.Shard >= Shards || a.ID == "" || a.Account == "" || len(a.Keys) == 0 {
		return Event{}, 0, false
	}
	e = Event{
		ID: a.ID, OccurredAt: time.UnixMilli(a.At).UTC(), RequestID: a.Request, ProjectID: a.Project, KeyID: a.Keys[len(a.Keys)-1],
		Operation: a.Op, Method: a.Method, Path: a.Path, Status: a.Status, Code: a.Code, EndUser: a.EndUser,
		IdempotentReplayed: a.Replayed, AccountID: a.Account, KeyPath: a.Keys, ServiceID: a.Service,
	}
	e.setCharged(a.Micro)
	return e, a.Shard, true
}

// ingestParallel bounds the puts one Ingest has in flight.
const ingestParallel = 16

// Ingest stores shipped events, each on the condition that it is new: a
// redelivered batch (the subscription retries, a replay) stores nothing
// twice, and the stream sees one insert per event, which the rollup counts
// once. An error means some events may be missing: deliver the batch again.
func Ingest(ctx context.Context, st store.Store, evs []Event, shards []int) error {
	sem := make(chan struct{}, ingestParallel)
	var wg sync.WaitGroup
	errs := make([]error, len(evs))
	for i := range evs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := st.Put(ctx, encode(&evs[i], shards[i]), store.NotExists())
			if err != nil && !errors.Is(err, store.ErrConditionFailed) {
				errs[i] = fmt.Errorf("audit: ingest %s: %w", evs[i].ID, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
