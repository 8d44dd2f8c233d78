package auditlogs_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
	"platformapi/shared/lambdaedge/auditlogs"
)

// delivery packs log lines as a CloudWatch Logs subscription delivers them.
func delivery(t *testing.T, lines []string) events.CloudwatchLogsEvent {
	t.Helper()
	data := events.CloudwatchLogsData{MessageType: "DATA_MESSAGE", LogGroup: "/aws/lambda/credits", SubscriptionFilters: []string{"audit"}}
	for i, l := range lines {
		data.LogEvents = append(data.LogEvents, events.CloudwatchLogsLogEvent{ID: strings.Repeat("0", i+1), Timestamp: time.Now().UnixMilli(), Message: l})
	}
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(raw)
	_ = w.Close()
	return events.CloudwatchLogsEvent{AWSLogs: events.CloudwatchLogsRawData{Data: base64.StdEncoding.EncodeToString(gz.Bytes())}}
}

// keyPath makes an account with a root key and a child on st: the path of
// the child, root first, and the account.
func keyPath(t *testing.T, st store.Store, clock func() time.Time) ([]string, string) {
	t.Helper()
	repo := keys.NewRepo(st, clock)
	ctx := context.Background()
	root, err := repo.CreateAccount(ctx, credittoken.Claims{ID: "ctk_" + t.Name(), CreditsMicro: 1, ExpiresAt: clock().Add(time.Hour).Unix()}, keys.CreateKeyRequest{Label: "root"})
	if err != nil {
		t.Fatal(err)
	}
	child, err := repo.CreateChild(ctx, []*keys.Key{root.Key}, keys.CreateKeyRequest{Label: "child"}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return []string{root.Key.ID, child.Key.ID}, root.Key.AccountID
}

// accessLine is the access line the kernel writes for a request whose
// event is e, the line naming what l names, at the event's time.
func accessLine(e audit.Event, l audit.Line) string {
	var out bytes.Buffer
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
	r := slog.NewRecord(e.OccurredAt, slog.LevelInfo, "request", 0)
	r.AddAttrs(audit.Fold(attrs, e, l)...)
	_ = slog.NewJSONHandler(&out, nil).Handle(context.Background(), r)
	return strings.TrimSpace(out.String())
}

func TestAShippedEventIsStoredOnceHoweverOftenItIsDelivered(t *testing.T) {
	for _, be := range teststores.All() {
		t.Run(be.Name, func(t *testing.T) {
			now := time.Date(2026, 3, 10, 21, 15, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			st := be.Open(t, clock)
			path, acct := keyPath(t, st, clock)
			var out bytes.Buffer
			rec := audit.NewShippingRecorder(&out, clock)
			ctx := context.Background()
			for i := range 5 {
				e := audit.Event{AccountID: acct, KeyPath: path, Operation: "credits.balance.read", Method: "GET",
					Path: "/v1/credits/balance", Status: 200, RequestID: "req_" + strings.Repeat("a", i+1)}
				if err := rec.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 5 {
				t.Fatalf("shipped %d lines, want 5", len(lines))
			}
			// A runtime's prefix on one line, a line that is no event, and
			// the whole batch delivered twice, to two instances.
			lines[0] = "2026-03-10T21:15:00.000Z\treq-1\t" + lines[0]
			lines = append(lines, `{"level":"INFO","msg":"request"}`)
			for range 2 {
				if err := auditlogs.New(st).Handle(ctx, delivery(t, lines)); err != nil {
					t.Fatal(err)
				}
			}
			got, _, err := audit.NewRepo(st, clock).List(ctx, audit.Filter{
				Viewer: audit.Viewer{AccountID: acct, KeyPath: path[:1]}, Since: now.Add(-time.Hour), Until: now.Add(time.Hour), Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, e := range got {
				seen[e.RequestID]++
			}
			if len(got) != 5 || len(seen) != 5 {
				t.Fatalf("listed %d events of %d requests, want 5 of 5", len(got), len(seen))
			}
		})
	}
}

// The event the ingest rebuilds from an access line, with the account and
// ancestors of the key's record, is the event the request prepared in
// process, field for field and id for id, as /audit-events lists it:
// whether the line names the event's key (the usual case) or not (a
// refusal before the key was known, which carries the key path itself).
func TestAnEventRebuiltByTheIngestIsTheEventRecordedInProcess(t *testing.T) {
	for _, be := range teststores.All() {
		t.Run(be.Name, func(t *testing.T) {
			// A clock below the millisecond: the event keeps its
			// millisecond, and its line's time carries it to the ingest.
			now := time.Date(2026, 3, 10, 21, 15, 0, 123_456_789, time.UTC)
			clock := func() time.Time { return now }
			st := be.Open(t, clock)
			path, acct := keyPath(t, st, clock)
			rec := audit.NewShippingRecorder(nil, clock)
			project, code, endUser := "prj_one", "limit_exceeded", "eu_3f9c"
			plain := audit.Event{RequestID: "req_0a1b", AccountID: acct, KeyPath: path, Operation: "credits.balance.read",
				Method: "GET", Path: "/v1/credits/balance", Status: 200}
			full := audit.Event{RequestID: "req_2c3d", AccountID: acct, KeyPath: path, Operation: "services.invoke.cloud-superbrain.memory.write",
				Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Status: 429, ProjectID: &project, Code: &code,
				EndUser: &endUser, IdempotentReplayed: true, ServiceID: "cloud-superbrain", ChargedMicro: 12_345}
			refused := full
			refused.RequestID = "req_4e5f"
			cases := []struct {
				name string
				e    audit.Event
				line func(audit.Event) audit.Line
			}{
				{"a read", plain, func(e audit.Event) audit.Line {
					return audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: e.Operation, KeyID: e.KeyID}
				}},
				{"every field set", full, func(e audit.Event) audit.Line {
					return audit.Line{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status, Operation: "services.invoke",
						KeyID: e.KeyID, EndUser: endUser}
				}},
				{"a line without the key", refused, func(e audit.Event) audit.Line {
					return audit.Line{RequestID: e.RequestID, Method: e.Method, Path: "/v1/other", Status: 500}
				}},
			}
			var lines []string
			var prepared []audit.Event
			for _, c := range cases {
				p, err := rec.Prepare(c.e)
				if err != nil {
					t.Fatal(err)
				}
				prepared, lines = append(prepared, p), append(lines, accessLine(p, c.line(p)))
			}
			ctx := context.Background()
			if err := auditlogs.New(st).Handle(ctx, delivery(t, lines)); err != nil {
				t.Fatal(err)
			}
			listed, _, err := audit.NewRepo(st, clock).List(ctx, audit.Filter{
				Viewer: audit.Viewer{AccountID: acct, KeyPath: path[:1]}, Since: now.Add(-time.Hour), Until: now.Add(time.Hour), Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]audit.Event{}
			for _, e := range listed {
				byID[e.ID] = e
			}
			for i, c := range cases {
				got, ok := byID[prepared[i].ID]
				if !ok {
					t.Errorf("%s: event %s not listed; listed %d events", c.name, prepared[i].ID, len(listed))
					continue
				}
				if !reflect.DeepEqual(got, prepared[i]) {
					t.Errorf("%s: rebuilt by the ingest\n %+v\nrecorded in process\n %+v\nline %s", c.name, got, prepared[i], lines[i])
				}
			}
		})
	}
}

// countingStore counts the batched reads of a real store.
type countingStore struct {
	store.Store
	batchGets atomic.Int32
}

func (c *countingStore) BatchGet(ctx context.Context, ks []store.Key) (map[string]store.Item, error) {
	c.batchGets.Add(1)
	return c.Store.BatchGet(ctx, ks)
}

// An ingest instance reads a key's record once: its account and ancestors
// never change, so later deliveries of the key's events read nothing more.
func TestAnIngesterReadsEachKeyOnce(t *testing.T) {
	now := time.Date(2026, 3, 10, 21, 15, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := &countingStore{Store: teststores.Embedded.Open(t, clock)}
	path, acct := keyPath(t, st, clock)
	var out bytes.Buffer
	rec := audit.NewShippingRecorder(&out, clock)
	in := auditlogs.New(st)
	st.batchGets.Store(0)
	for i := range 3 {
		out.Reset()
		e := audit.Event{AccountID: acct, KeyPath: path, Operation: "credits.balance.read", Method: "GET",
			Path: "/v1/credits/balance", Status: 200, RequestID: "req_" + strings.Repeat("b", i+1)}
		if err := rec.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		if err := in.Handle(context.Background(), delivery(t, []string{strings.TrimSpace(out.String())})); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.batchGets.Load(); n != 1 {
		t.Fatalf("three deliveries of one key read its record in %d batches, want 1", n)
	}
}
