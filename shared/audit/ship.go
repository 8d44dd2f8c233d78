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
	Audit journalLine `json:"auditEvent"`
}

// ShipFilterPattern is the CloudWatch Logs subscription filter that selects
// the lines of shipped events.
const ShipFilterPattern = `{ $.auditEvent.event.id = "aud_*" }`

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
	line, err := json.Marshal(shippedLine{Audit: journalLine{Shard: rand.IntN(Shards), Event: toStored(&e)}})
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
	if json.Unmarshal(raw, &l) != nil || l.Audit.Shard < 0 || l.Audit.Shard >= Shards {
		return Event{}, 0, false
	}
	e, err := fromStored(l.Audit.Event)
	if err != nil {
		return Event{}, 0, false
	}
	return e, l.Audit.Shard, true
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
