package auditlogs_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/audit"
	"platformapi/shared/audit/auditlogs"
	"platformapi/shared/store/teststores"
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

func TestAShippedEventIsStoredOnceHoweverOftenItIsDelivered(t *testing.T) {
	for _, be := range teststores.All() {
		t.Run(be.Name, func(t *testing.T) {
			now := time.Date(2026, 3, 10, 21, 15, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			st := be.Open(t, clock)
			var out bytes.Buffer
			rec := audit.NewShippingRecorder(&out, clock)
			ctx := context.Background()
			path := []string{"key_01JH0000000000000000000000", "key_01JH0000000000000000000001"}
			for i := range 5 {
				e := audit.Event{AccountID: "acct_1", KeyPath: path, Operation: "credits.balance.read", Method: "GET",
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
			// the whole batch delivered twice.
			lines[0] = "2026-03-10T21:15:00.000Z\treq-1\t" + lines[0]
			lines = append(lines, `{"level":"INFO","msg":"request"}`)
			for range 2 {
				if err := auditlogs.Handle(ctx, st, delivery(t, lines)); err != nil {
					t.Fatal(err)
				}
			}
			got, _, err := audit.NewRepo(st, clock).List(ctx, audit.Filter{
				Viewer: audit.Viewer{AccountID: "acct_1", KeyPath: path[:1]}, Since: now.Add(-time.Hour), Until: now.Add(time.Hour), Limit: 100})
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
