package audit_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"platformapi/shared/audit"
)

func TestAShippedLineCarriesEveryFieldOfTheEvent(t *testing.T) {
	w := keyTree()
	var out bytes.Buffer
	rec := audit.NewShippingRecorder(&out, w.clock)
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
		want := e
		want.ID, want.OccurredAt, want.KeyID = got.ID, t0.UTC(), e.KeyPath[len(e.KeyPath)-1]
		want.ChargedCredits = float64(e.ChargedMicro) / 1e6
		if !reflect.DeepEqual(got, want) {
			t.Errorf("shipped and decoded\n %+v\nwant\n %+v", got, want)
		}
	}
}
