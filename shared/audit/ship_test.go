package audit_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"platformapi/shared/audit"
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
			var out bytes.Buffer
			attrs := []slog.Attr{slog.String("requestId", l.RequestID), slog.String("method", l.Method), slog.String("path", l.Path),
				slog.Int("status", l.Status), slog.String("operation", l.Operation), slog.String("keyId", l.KeyID), slog.String("endUser", l.EndUser),
				slog.Any("audit", audit.Fold(e, l))}
			slog.New(slog.NewJSONHandler(&out, nil)).LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
			got, shard, ok := audit.Shipped(strings.TrimSpace(out.String()))
			if !ok || shard < 0 || shard >= audit.Shards {
				t.Fatalf("the line %s does not decode", out.String())
			}
			got = w.resolve(t, got)
			if got.ID != e.ID {
				t.Errorf("the ingest's event id %s is not the request's %s", got.ID, e.ID)
			}
			want := c.e
			want.ID, want.OccurredAt, want.KeyID = e.ID, e.OccurredAt, e.KeyPath[len(e.KeyPath)-1]
			want.ChargedCredits = float64(e.ChargedMicro) / 1e6
			if !reflect.DeepEqual(got, want) {
				t.Errorf("folded and decoded\n %+v\nwant\n %+v\nline %s", got, want, out.String())
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

// The line carries only what neither the line nor the key's record says:
// with a line that names the event's key, the event's time alone, a few
// dozen bytes where the account, the key path and the id took 158.
func TestAnAuditedReadAddsOnlyItsTimeToTheAccessLine(t *testing.T) {
	w := keyTree()
	rec := audit.NewShippingRecorder(io.Discard, w.clock.Now)
	e, err := rec.Prepare(w.event(w.a1, "", "", "credits.balance.read", 200, 0, t0))
	if err != nil {
		t.Fatal(err)
	}
	l := audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: e.Operation, KeyID: e.KeyID}
	if got, want := string(audit.Fold(e, l)), `{"t":"`+e.ID[4:14]+`"}`; got != want {
		t.Fatalf("audit attribute %s, want %s", got, want)
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
