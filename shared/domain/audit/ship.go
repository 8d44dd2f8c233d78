package audit

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"platformapi/shared/adapters/store"
)

// On AWS the event leaves the request's critical path through the log: it
// rides on the request's own access-log line (Fold), which Lambda sends to
// CloudWatch Logs; a subscription filter delivers the lines that hold an
// event to the audit-ingest function, which puts each event's item (Ingest).
// The table's stream then counts it as it counts any event. A request pays
// no round trip and no second line: the event adds to the access line only
// what the line does not already say, because CloudWatch Logs bills every
// byte it ingests: a plain read adds a seven-byte marker, and its line's
// time is the event's.

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

// shippedLine is a line that carries an event: the access line's fields,
// its time (the event's), the marker (ShipFilterPattern selects it) and,
// when the event says more than the line, the event's "audit" object.
type shippedLine struct {
	Line
	Time   string   `json:"time"`
	Marker int      `json:"au"`
	Audit  *shipped `json:"audit"`
}

// shipped is the event's part of the line beyond the marker: short names,
// and nothing the line or the key's record already says. The id is the
// event's millisecond, which is the line's own time (the kernel writes the
// line of a request whose event it ships at the event's time), and the
// request id's digest (eventID); the shard comes from the id. The account
// and the ancestor keys are those of the line's keyId, read from its record
// by the ingest (Resolve); only a line that does not name the event's key
// (a refusal before the key was known) carries them, the whole key path in
// k. The credits are the micro-credits. The path, end user, status and
// operation appear only where the event's differ from the line's. A plain
// read says nothing more, and its line has no "audit" object at all.
type shipped struct {
	Account  string   `json:"a,omitempty"`
	KeyPath  []string `json:"k,omitempty"`
	Project  *string  `json:"pj,omitempty"`
	Op       string   `json:"op,omitempty"`
	Path     *string  `json:"p,omitempty"`
	Status   int      `json:"s,omitempty"`
	Code     *string  `json:"c,omitempty"`
	EndUser  *string  `json:"eu,omitempty"`
	Replayed bool     `json:"r,omitempty"`
	Service  string   `json:"sv,omitempty"`
	Micro    int64    `json:"mc,omitempty"`
}

// marker is the attribute only a line that carries an event has: seven
// bytes (`,"au":1`) where an object holding the event's time took 27, since
// CloudWatch Logs bills every byte it ingests.
const marker = "au"

// ShipFilterPattern is the CloudWatch Logs subscription filter that selects
// the lines that carry an event: only they have the marker, always 1.
const ShipFilterPattern = `{ $.au = 1 }`

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
	if e.RequestID == "" {
		return Event{}, fmt.Errorf("audit: a shipped event needs its request id")
	}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = r.now()
	}
	stamp(&e)
	e.ID = eventID(e.OccurredAt, e.RequestID)
	return e, nil
}

// eventID is the id of a request's event: its millisecond, as every event
// id begins, then 80 bits of the request id's SHA-256 where other ids have
// random ones. The line need not carry it (the ingest computes it from the
// line's request id and time), and a request has one event, so a redelivered
// line still maps to the one item the ingest's conditional put keeps.
func eventID(at time.Time, requestID string) string {
	return "aud_" + idTimeText(at) + requestDigest(requestID)
}

// requestDigest is 80 bits of the request id's SHA-256 in 16 base32
// characters: the rest of its event's id.
func requestDigest(requestID string) string {
	sum := sha256.Sum256([]byte(requestID))
	var out [16]byte
	hi, lo := binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint16(sum[8:10])
	for i := range out {
		// Bit 79-5i down: the first 64 from hi, the last 16 from lo.
		shift := 75 - 5*i
		var v uint64
		switch {
		case shift >= 16:
			v = hi >> (shift - 16)
		default:
			v = hi<<(16-shift) | uint64(lo)>>shift
		}
		out[i] = crockford[v&31]
	}
	return string(out[:])
}

// idTimeText is the ten characters an id of a millisecond begins with.
func idTimeText(at time.Time) string {
	var out [10]byte
	ms := uint64(at.UnixMilli())
	for i := 9; i >= 0; i-- {
		out[i] = crockford[ms&31]
		ms >>= 5
	}
	return string(out[:])
}

// Fold appends to the attributes of the access line l what its prepared
// event e adds: the marker and, only when the event says more than the
// line, its "audit" object. The line's record must carry e.OccurredAt as
// its time: the ingest takes the event's millisecond from it.
func Fold(attrs []slog.Attr, e Event, l Line) []slog.Attr {
	attrs = append(attrs, slog.Int(marker, 1))
	if raw := fold(e, l); raw != nil {
		attrs = append(attrs, slog.Any("audit", raw))
	}
	return attrs
}

// fold is the "audit" object of a prepared event on the access line l, nil
// when the line and the key's record say it all.
func fold(e Event, l Line) json.RawMessage {
	s := shipped{Project: e.ProjectID, Code: e.Code, Replayed: e.IdempotentReplayed, Service: e.ServiceID, Micro: e.ChargedMicro}
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
		s.Account, s.KeyPath = e.AccountID, e.KeyPath
	}
	raw, _ := json.Marshal(s) // strings, ints and a bool: cannot fail
	if string(raw) == "{}" {
		return nil
	}
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
		Time string `json:"time"`
		Line
		Marker int             `json:"au"`
		Audit  json.RawMessage `json:"audit,omitempty"`
	}{e.OccurredAt.Format(time.RFC3339Nano), l, 1, fold(e, l)})
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
// without one. The event's millisecond is the line's time. The line may
// carry a prefix before the JSON (a runtime's timestamp and request id).
// Unless the line carried them, the event's account and ancestors are left
// to its key's record: its KeyPath is the key alone and its AccountID empty
// until Resolve.
func Shipped(message string) (e Event, shard int, ok bool) {
	raw := []byte(message)
	if i := bytes.IndexByte(raw, '{'); i > 0 {
		raw = raw[i:]
	}
	var l shippedLine
	if json.Unmarshal(raw, &l) != nil || l.Marker != 1 || l.RequestID == "" || l.Method == "" {
		return Event{}, 0, false
	}
	at, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil || at.UnixMilli() < 0 {
		// An id's time is the milliseconds since 1970.
		return Event{}, 0, false
	}
	at = time.UnixMilli(at.UnixMilli()).UTC()
	id := eventID(at, l.RequestID)
	a := l.Audit
	if a == nil {
		a = &shipped{}
	}
	keyPath := a.KeyPath
	if a.Account == "" {
		keyPath = []string{l.KeyID}
	}
	if len(keyPath) == 0 || keyPath[len(keyPath)-1] == "" || a.Account == "" && len(a.KeyPath) > 0 {
		return Event{}, 0, false
	}
	e = Event{
		ID: id, OccurredAt: at, RequestID: l.RequestID, ProjectID: a.Project, KeyID: keyPath[len(keyPath)-1],
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
	return e, shardOf(id), true
}

// Chain is what a key's record says of every request the key makes: its
// account and its ancestors, root first. Neither ever changes (a key's
// secret names its ancestors), and records are never deleted, so the ingest
// may keep what it read.
type Chain struct {
	AccountID string
	Ancestors []string
}

// Unresolved lists, once each, the keys whose chains the events lack.
func Unresolved(evs []Event) []string {
	var out []string
	for _, e := range evs {
		if e.AccountID == "" && !slices.Contains(out, e.KeyID) {
			out = append(out, e.KeyID)
		}
	}
	return out
}

// Resolve completes the events that lack their key's chain from chains and
// keeps them in place; it returns the events and shards it could not
// complete removed, and the keys it had no chain of.
func Resolve(evs []Event, shards []int, chains map[string]Chain) ([]Event, []int, []string) {
	var missing []string
	n := 0
	for i, e := range evs {
		if e.AccountID == "" {
			c, ok := chains[e.KeyID]
			if !ok {
				if !slices.Contains(missing, e.KeyID) {
					missing = append(missing, e.KeyID)
				}
				continue
			}
			e.AccountID, e.KeyPath = c.AccountID, append(slices.Clip(c.Ancestors), e.KeyID)
		}
		evs[n], shards[n] = e, shards[i]
		n++
	}
	return evs[:n], shards[:n], missing
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
