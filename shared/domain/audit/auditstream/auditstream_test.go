package auditstream_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/testkit/teststores"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/auditstream"
)

// The fixture's events happened on 2026-03-10 at 21:15 UTC.
var fixtureDay = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

// fixture is events/dynamodb/audit-stream.json: two audit events inserted
// (the first delivered twice), a rollup marker inserted, a counter
// modified and an expired event removed by TTL.
func fixture(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	raw, err := os.ReadFile("../../../../events/dynamodb/audit-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestAStreamImageDecodesToTheRecordedEvent(t *testing.T) {
	ev := fixture(t)
	e, ok, err := auditstream.Event(ev.Records[0])
	if err != nil || !ok {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if e.RequestID != "req_fixture_1" || e.Status != 200 || e.ChargedMicro != 10_000 || e.ChargedCredits != 0.01 ||
		e.ServiceID != "cloud-superbrain" || len(e.KeyPath) != 2 || e.KeyID != e.KeyPath[1] || e.ProjectID == nil ||
		e.EndUser == nil || *e.EndUser != "eu_3f9c" || e.Code != nil || !e.OccurredAt.Equal(fixtureDay.Add(21*time.Hour+15*time.Minute+30250*time.Millisecond)) {
		t.Fatalf("decoded %+v", e)
	}
	expires, err := ev.Records[0].Change.NewImage[store.AttrExpiresAt].Int64()
	if err != nil || expires != e.OccurredAt.Add(audit.Retention).Unix() {
		t.Fatalf("expiresAt %d, want the occurrence plus 90 days", expires)
	}
	for i, want := range []bool{true, false, false, true, true, false} {
		if _, ok, err := auditstream.Event(ev.Records[i]); ok != want || err != nil {
			t.Errorf("record %d (%s): audit event %v, err %v; want %v", i, ev.Records[i].EventName, ok, err, want)
		}
	}
}

func TestAStreamBatchIsCountedOnceEvenWhenDeliveredAgain(t *testing.T) {
	for _, be := range teststores.All() {
		t.Run(be.Name, func(t *testing.T) {
			now := func() time.Time { return fixtureDay.Add(24 * time.Hour) }
			st := be.Open(t, now)
			r := audit.NewRollup(st)
			ev := fixture(t)
			for range 2 { // Lambda may deliver a batch again
				if res := auditstream.Handle(context.Background(), r, ev); len(res.BatchItemFailures) != 0 {
					t.Fatalf("failures %v", res.BatchItemFailures)
				}
			}
			e, _, _ := auditstream.Event(ev.Records[0])
			root := audit.Viewer{AccountID: e.AccountID, KeyPath: e.KeyPath[:1]}
			buckets, _, err := audit.NewRepo(st, now).Usage(context.Background(), audit.UsageFilter{
				Viewer: root, Start: fixtureDay, End: fixtureDay.Add(24 * time.Hour), BucketWidth: 24 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if len(buckets) != 1 || len(buckets[0].Results) != 1 {
				t.Fatalf("buckets %+v", buckets)
			}
			got := buckets[0].Results[0]
			if got.Requests != 2 || got.Errors != 1 || got.ChargedMicro != 10_000 {
				t.Fatalf("usage %+v, want 2 requests, 1 error, 10000 micro-credits", got)
			}
		})
	}
}

// failingStore refuses every transaction, as a throttled table would.
type failingStore struct{ store.Store }

func (failingStore) Transact(context.Context, []store.Op) error { return store.ErrUnavailable }

func TestAStreamBatchReportsTheFirstRecordNotCounted(t *testing.T) {
	st := teststores.Embedded.Open(t, func() time.Time { return fixtureDay })
	t.Run("the rollup failed: retry from the first audit record", func(t *testing.T) {
		res := auditstream.Handle(context.Background(), audit.NewRollup(failingStore{st}), fixture(t))
		if len(res.BatchItemFailures) != 1 || res.BatchItemFailures[0].ItemIdentifier != "100" {
			t.Fatalf("failures %v, want sequence number 100", res.BatchItemFailures)
		}
	})
	t.Run("an undecodable audit record is reported, not dropped", func(t *testing.T) {
		ev := fixture(t)
		var bad events.DynamoDBAttributeValue
		if err := bad.UnmarshalJSON([]byte(`{"B":"` + base64.StdEncoding.EncodeToString([]byte("{not json")) + `"}`)); err != nil {
			t.Fatal(err)
		}
		ev.Records[3].Change.NewImage[store.AttrDoc] = bad
		res := auditstream.Handle(context.Background(), audit.NewRollup(st), ev)
		if len(res.BatchItemFailures) != 1 || res.BatchItemFailures[0].ItemIdentifier != "103" {
			t.Fatalf("failures %v, want sequence number 103", res.BatchItemFailures)
		}
		if _, _, err := auditstream.Event(ev.Records[3]); err == nil {
			t.Fatalf("err = %v", err)
		}
	})
}
