package audit_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"platformapi/shared/domain/audit"
)

func TestAShippedLineCarriesEveryFieldOfTheEvent(t *testing.T) {
	w := keyTree()
	var out bytes.Buffer
	rec := audit.NewShippingRecorder(&out, w.clock.Now)
	project, code, endUser := "prj_one", "limit_exceeded", "eu_3f9c"
	for _, e := range []audit.Event{
		w.event(w.a1, "", "", "credits.balance.read", 200, 0, t0),
		{OccurredAt: t0, RequestID: "req_1", AccountID: w.acct, KeyPath: w.a1, Operation: "services.invoke.cloud-superbrain.memory.write",
			Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Status: 429, ProjectID: &project, Code: &code,
			EndUser: &endUser, IdempotentReplayed: true, ServiceID: "cloud-superbrain", ChargedMicro: 12_345},
	} {
		out.Reset()
		if err := rec.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		got, shard, ok := audit.Shipped(strings.TrimSpace(out.String()))
		if !ok || shard < 0 || shard >= audit.Shards {
			t.Fatalf("the line %s does not decode (shard %d)", out.String(), shard)
		}
		got = w.resolve(t, got)
		want := e
		want.ID, want.OccurredAt, want.KeyID = got.ID, t0.UTC(), e.KeyPath[len(e.KeyPath)-1]
		want.ChargedCredits = float64(e.ChargedMicro) / 1e6
		if !reflect.DeepEqual(got, want) {
			t.Errorf("shipped and decoded\n %+v\nwant\n %+v", got, want)
		}
	}
}

// TestAnEventFoldedIntoTheAccessLineDecodesWhole: the access line and the
// event's "audit" object together carry every field of the event, whether
// the line agrees with the event (the usual case: nothing repeated) or not
// (a refusal before the key was known, a path the line redacts otherwise).
func TestAnEventFoldedIntoTheAccessLineDecodesWhole(t *testing.T) {
	w := keyTree()
	rec := audit.NewShippingRecorder(io.Discard, w.clock.Now)
	project, code, endUser := "prj_one", "limit_exceeded", "eu_3f9c"
	full := audit.Event{RequestID: "req_1", AccountID: w.acct, KeyPath: w.a1, Operation: "services.invoke.cloud-superbrain.memory.write",
		Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Status: 429, ProjectID: &project, Code: &code,
		EndUser: &endUser, IdempotentReplayed: true, ServiceID: "cloud-superbrain", ChargedMicro: 12_345}
	same := func(e audit.Event) audit.Line {
		return audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: "services.invoke",
			KeyID: e.KeyPath[len(e.KeyPath)-1], EndUser: endUser}
	}
	for _, c := range []struct {
		name string
		e    audit.Event
		line func(audit.Event) audit.Line
	}{
		{"the line says it all", w.event(w.a1, "", "", "credits.balance.read", 200, 0, t0), func(e audit.Event) audit.Line {
			return audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: e.Operation, KeyID: e.KeyID}
		}},
		{"every field set", full, same},
		{"the line differs in everything it can", full, func(e audit.Event) audit.Line {
			return audit.Line{RequestID: e.RequestID, Method: e.Method, Path: "/v1/other", Status: 500}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := rec.Prepare(c.e)
			if err != nil {
				t.Fatal(err)
			}
			l := c.line(e)
			line := accessLine(e.OccurredAt, l, func(attrs []slog.Attr) []slog.Attr { return audit.Fold(attrs, e, l) })
			got, shard, ok := audit.Shipped(line)
			if !ok || shard < 0 || shard >= audit.Shards {
				t.Fatalf("the line %s does not decode", line)
			}
			got = w.resolve(t, got)
			if got.ID != e.ID {
				t.Errorf("the ingest's event id %s is not the request's %s", got.ID, e.ID)
			}
			want := c.e
			want.ID, want.OccurredAt, want.KeyID = e.ID, e.OccurredAt, e.KeyPath[len(e.KeyPath)-1]
			want.ChargedCredits = float64(e.ChargedMicro) / 1e6
			if !reflect.DeepEqual(got, want) {
				t.Errorf("folded and decoded\n %+v\nwant\n %+v\nline %s", got, want, line)
			}
		})
	}
}

// resolve completes a shipped event with its key's chain, as the ingest
// does from the key's record.
func (w *world) resolve(t *testing.T, e audit.Event) audit.Event {
	t.Helper()
	chains := map[string]audit.Chain{}
	for _, path := range [][]string{w.root, w.a, w.a1, w.b} {
		chains[path[len(path)-1]] = audit.Chain{AccountID: w.acct, Ancestors: path[:len(path)-1]}
	}
	evs, _, missing := audit.Resolve([]audit.Event{e}, []int{0}, chains)
	if len(missing) > 0 || len(evs) != 1 {
		t.Fatalf("no chain of %v", missing)
	}
	return evs[0]
}

// accessLine is the access line the kernel writes at time at for a request
// that l describes, with what fold adds to its attributes.
func accessLine(at time.Time, l audit.Line, fold func([]slog.Attr) []slog.Attr) string {
	attrs := []slog.Attr{slog.String("requestId", l.RequestID), slog.String("method", l.Method), slog.String("path", l.Path),
		slog.Int("status", l.Status), slog.Int64("latencyMicros", 812)}
	if l.Operation != "" {
		attrs = append(attrs, slog.String("operation", l.Operation))
	}
	if l.KeyID != "" {
		attrs = append(attrs, slog.String("keyId", l.KeyID))
	}
	if l.EndUser != "" {
		attrs = append(attrs, slog.String("endUser", l.EndUser))
	}
	attrs = fold(attrs)
	var out bytes.Buffer
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	r.AddAttrs(attrs...)
	_ = slog.NewJSONHandler(&out, nil).Handle(context.Background(), r)
	return strings.TrimSpace(out.String())
}

// A plain audited read's line is the line the same read writes unaudited,
// at the event's time, plus the seven bytes of the marker: the time, the
// account, the key path and the id all come from the line and the key's
// record.
func TestAPlainAuditedReadsLineAddsOnlyTheMarker(t *testing.T) {
	w := keyTree()
	rec := audit.NewShippingRecorder(io.Discard, w.clock.Now)
	e, err := rec.Prepare(w.event(w.a1, "", "", "credits.balance.read", 200, 0, t0.Add(1234*time.Microsecond)))
	if err != nil {
		t.Fatal(err)
	}
	l := audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: e.Operation, KeyID: e.KeyID}
	plain := accessLine(e.OccurredAt, l, func(attrs []slog.Attr) []slog.Attr { return attrs })
	audited := accessLine(e.OccurredAt, l, func(attrs []slog.Attr) []slog.Attr { return audit.Fold(attrs, e, l) })
	if got, want := audited, strings.TrimSuffix(plain, "}")+`,"au":1}`; got != want {
		t.Fatalf("audited line\n %s\nwant the plain line and the marker\n %s", got, want)
	}
	if len(audited)-len(plain) != 7 {
		t.Fatalf("the event adds %d bytes, want 7", len(audited)-len(plain))
	}
	got, _, ok := audit.Shipped(audited)
	if !ok {
		t.Fatalf("the line %s does not decode", audited)
	}
	if got = w.resolve(t, got); !reflect.DeepEqual(got, e) {
		t.Fatalf("decoded\n %+v\nwant\n %+v", got, e)
	}
}

// The ingest takes the event's time from the line's own: to the
// millisecond, whatever the line's clock or zone says below or beside it,
// and with the id the request prepared. A millisecond of .000 or .120 is
// written without its trailing zeros (RFC 3339 as slog writes it).
func TestTheIngestTakesTheEventsTimeFromTheLinesTime(t *testing.T) {
	w := keyTree()
	east := time.FixedZone("UTC+05:30", 5*3600+1800)
	for _, c := range []struct {
		name string
		at   time.Time
		line func(time.Time) time.Time
	}{
		{"a whole second (.000)", t0, time.Time.UTC},
		{"the first millisecond", t0.Add(time.Millisecond), time.Time.UTC},
		{"a millisecond with a trailing zero", t0.Add(120 * time.Millisecond), time.Time.UTC},
		{"the last millisecond", t0.Add(999 * time.Millisecond), time.Time.UTC},
		{"below the millisecond, dropped", t0.Add(42*time.Millisecond + 999_999*time.Nanosecond), time.Time.UTC},
		{"a line in another zone", t0.Add(7 * time.Millisecond), func(at time.Time) time.Time { return at.In(east) }},
		{"the last second of a year", time.Date(2019, 12, 31, 23, 59, 59, 1e6, time.UTC), time.Time.UTC},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := audit.NewShippingRecorder(io.Discard, w.clock.Now)
			e, err := rec.Prepare(w.event(w.a1, "", "", "credits.balance.read", 200, 0, c.at))
			if err != nil {
				t.Fatal(err)
			}
			if want := c.at.UTC().Truncate(time.Millisecond); !e.OccurredAt.Equal(want) {
				t.Fatalf("prepared at %v, want %v", e.OccurredAt, want)
			}
			l := audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: e.Operation, KeyID: e.KeyID}
			line := accessLine(c.line(e.OccurredAt), l, func(attrs []slog.Attr) []slog.Attr { return audit.Fold(attrs, e, l) })
			got, _, ok := audit.Shipped(line)
			if !ok {
				t.Fatalf("the line %s does not decode", line)
			}
			if got.ID != e.ID || got.OccurredAt != e.OccurredAt {
				t.Fatalf("line %s: decoded %s at %v, want %s at %v", line, got.ID, got.OccurredAt, e.ID, e.OccurredAt)
			}
		})
	}
}

// Only a line with the marker and a time is an event: the filter selects
// exactly the marked lines, and a marked line whose time is gone or garbled
// names no event rather than a wrong one.
func TestOnlyAMarkedLineWithItsTimeIsAnEvent(t *testing.T) {
	const fields = `"requestId":"req_1","method":"GET","path":"/v1/credits/balance","status":200,"operation":"credits.balance.read","keyId":"key_01KB0000000000000000000000"`
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`{"time":"2026-03-10T20:00:00.001Z",` + fields + `,"au":1}`, true},
		{`{"time":"2026-03-10T20:00:00.001Z",` + fields + `}`, false},
		{`{"time":"2026-03-10T20:00:00.001Z",` + fields + `,"au":2}`, false},
		{`{"time":"2026-03-10T20:00:00.001Z",` + fields + `,"audit":{"t":"01KB000000"}}`, false},
		{`{` + fields + `,"au":1}`, false},
		{`{"time":"2026-03-10 20:00:00.001",` + fields + `,"au":1}`, false},
		{`{"time":"1969-12-31T23:59:59.999Z",` + fields + `,"au":1}`, false},
	} {
		if _, _, ok := audit.Shipped(c.line); ok != c.ok {
			t.Errorf("%s: an event %v, want %v", c.line, ok, c.ok)
		}
	}
}

// A request's event id follows from its request id and time alone, so a
// line delivered again names the same event, and two requests in the same
// millisecond name two.
func TestAShippedEventsIDIsItsRequestsOwn(t *testing.T) {
	w := keyTree()
	rec := audit.NewShippingRecorder(io.Discard, w.clock.Now)
	ids := map[string]string{}
	for _, req := range []string{"req_1", "req_1", "req_2"} {
		e := w.event(w.a1, "", "", "credits.balance.read", 200, 0, t0)
		e.RequestID = req
		p, err := rec.Prepare(e)
		if err != nil {
			t.Fatal(err)
		}
		if id, seen := ids[req]; seen && id != p.ID {
			t.Fatalf("request %s: ids %s and %s", req, id, p.ID)
		}
		ids[req] = p.ID
	}
	if ids["req_1"] == ids["req_2"] {
		t.Fatalf("two requests share the id %s", ids["req_1"])
	}
}
