package audit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"platformapi/shared/ids"
	"platformapi/shared/store"
)

// On AWS the event leaves the request's critical path through the log: it
// rides on the request's own access-log line (Fold), which Lambda sends to
// CloudWatch Logs; a subscription filter delivers the lines that hold an
// event to the audit-ingest function, which puts each event's item (Ingest).
// The table's stream then counts it as it counts any event. A request pays
// no round trip and no second line: the event adds to the access line only
// what the line does not already say, because CloudWatch Logs bills every
// byte it ingests.

// Line is what a request's access-log line says that its event says too:
// the event is folded into it without repeating these.
type Line struct {
	RequestID string `json:"requestId"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	Operation string `json:"operation,omitempty"`
	KeyID     string `json:"keyId,omitempty"`
	EndUser   string `json:"endUser,omitempty"`
}

// shippedLine is a line that carries an event: the access line's fields
// and the event's "audit" object (ShipFilterPattern selects it).
type shippedLine struct {
	Line
	Audit *shipped `json:"audit"`
}

// shipped is the event's part of the line: short names, and nothing the
// line or the id already says. The time and the shard come from the id
// (its first ten characters are its millisecond), the key id is the line's
// keyId (k holds its ancestors), the credits are the micro-credits. The
// path, end user, status and operation appear only where the event's
// differ from the line's.
type shipped struct {
	ID        string   `json:"id"`
	Account   string   `json:"a"`
	Ancestors []string `json:"k,omitempty"`
	Project   *string  `json:"pj,omitempty"`
	Op        string   `json:"op,omitempty"`
	Path      *string  `json:"p,omitempty"`
	Status    int      `json:"s,omitempty"`
	Code      *string  `json:"c,omitempty"`
	EndUser   *string  `json:"eu,omitempty"`
	Replayed  bool     `json:"r,omitempty"`
	Service   string   `json:"sv,omitempty"`
	Micro     int64    `json:"mc,omitempty"`
	// KeyID is set when the line names another key (none, when the
	// request was refused before its key was known); k is then the
	// whole key path.
	KeyID string `json:"kid,omitempty"`
}

// ShipFilterPattern is the CloudWatch Logs subscription filter that selects
// the lines that carry an event.
const ShipFilterPattern = `{ $.audit.id = "aud_*" }`

// NewShippingRecorder ships events on log lines: the kernel folds each
// request's event into its access line (Prepare, Fold); Record, for an
// event outside a request, writes a line of its own on w (a Lambda
// function's standard output).
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

// Ships reports whether events go out on log lines (Prepare and Fold).
func (r *Recorder) Ships() bool { return r.ship != nil }

// Prepare checks and stamps an event for Fold, as Record would.
func (r *Recorder) Prepare(e Event) (Event, error) {
	if err := check(&e); err != nil {
		return Event{}, err
	}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = r.now()
	}
	stamp(&e)
	return e, nil
}

// Fold is the "audit" object of a prepared event on the access line l.
func Fold(e Event, l Line) json.RawMessage {
	s := shipped{ID: e.ID, Account: e.AccountID, Ancestors: e.KeyPath[:len(e.KeyPath)-1], Project: e.ProjectID,
		Code: e.Code, Replayed: e.IdempotentReplayed, Service: e.ServiceID, Micro: e.ChargedMicro}
	if e.Operation != l.Operation {
		s.Op = e.Operation
	}
	if e.Path != l.Path {
		s.Path = &e.Path
	}
	if e.Status != l.Status {
		s.Status = e.Status
	}
	if eu := deref(e.EndUser); eu != l.EndUser {
		s.EndUser = &eu
	}
	if e.KeyID != l.KeyID {
		s.Ancestors, s.KeyID = e.KeyPath, e.KeyID
	}
	raw, _ := json.Marshal(s) // strings, ints and a bool: cannot fail
	return raw
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *shipper) send(e Event) error {
	l := Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: e.Operation, KeyID: e.KeyID, EndUser: deref(e.EndUser)}
	line, err := json.Marshal(struct {
		Line
		Audit json.RawMessage `json:"audit"`
	}{l, Fold(e, l)})
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

// Shipped decodes the event a log line carries; ok is false for a line
// without one. The line may carry a prefix before the JSON (a runtime's
// timestamp and request id).
func Shipped(message string) (e Event, shard int, ok bool) {
	raw := []byte(message)
	if i := bytes.IndexByte(raw, '{'); i > 0 {
		raw = raw[i:]
	}
	var l shippedLine
	if json.Unmarshal(raw, &l) != nil || l.Audit == nil {
		return Event{}, 0, false
	}
	a := l.Audit
	at, ok := idTime(a.ID)
	if !ok || a.Account == "" || l.RequestID == "" || l.Method == "" {
		return Event{}, 0, false
	}
	keyPath := a.Ancestors
	if a.KeyID == "" {
		keyPath = append(slices.Clip(keyPath), l.KeyID)
	}
	if len(keyPath) == 0 || keyPath[len(keyPath)-1] == "" {
		return Event{}, 0, false
	}
	e = Event{
		ID: a.ID, OccurredAt: at, RequestID: l.RequestID, ProjectID: a.Project, KeyID: keyPath[len(keyPath)-1],
		Operation: cmp.Or(a.Op, l.Operation), Method: l.Method, Path: l.Path, Status: cmp.Or(a.Status, l.Status), Code: a.Code,
		IdempotentReplayed: a.Replayed, AccountID: a.Account, KeyPath: keyPath, ServiceID: a.Service,
	}
	if a.Path != nil {
		e.Path = *a.Path
	}
	if eu := cmp.Or(a.EndUser, &l.EndUser); *eu != "" {
		e.EndUser = eu
	}
	if e.Operation == "" || e.Status < 100 || e.Status > 599 {
		return Event{}, 0, false
	}
	e.setCharged(a.Micro)
	return e, shardOf(a.ID), true
}

// idTime is the millisecond an event id carries (ids.New: the first ten
// base32 characters of its body).
func idTime(id string) (time.Time, bool) {
	if !ids.Valid("aud", id) {
		return time.Time{}, false
	}
	var ms uint64
	for _, c := range []byte(id[len("aud_") : len("aud_")+10]) {
		ms = ms<<5 | uint64(strings.IndexByte(crockford, c))
	}
	return time.UnixMilli(int64(ms)).UTC(), true
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// shardOf spreads shipped events over the shards by their id's random
// last character: the same event always goes to the same item.
func shardOf(id string) int { return strings.IndexByte(crockford, id[len(id)-1]) % Shards }

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
