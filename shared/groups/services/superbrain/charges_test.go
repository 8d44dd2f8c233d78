package superbrain

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"platformapi/shared/base/catalog"
)

func TestChargesAreExactAndNeverAboveTheCataloguePrice(t *testing.T) {
	svc, _ := catalog.Lookup(ServiceID)
	for _, tc := range []struct {
		op      string
		results int
		want    int64
	}{
		{OpWrite, 0, 10_000},
		{OpList, 0, 5_000},
		{OpDelete, 0, 5_000},
		{OpSearch, 0, 5_000},
		{OpSearch, 1, 6_000},
		{OpSearch, 10, 15_000},
		{OpSearch, 15, 20_000},
		{OpSearch, 16, 20_000},
		{OpSearch, maxSearchHits, 20_000},
	} {
		op, _ := svc.Op(tc.op)
		got := charge(tc.op, tc.results)
		if got != tc.want || got > op.PriceMicro || got <= 0 {
			t.Errorf("%s with %d results charges %d, want %d (price %d)", tc.op, tc.results, got, tc.want, op.PriceMicro)
		}
	}
}

func TestInvokeReportsTheChargeOfWhatItDid(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		for i := range 3 {
			h.write(alice, fmt.Sprintf("lunch idea %d", i))
		}
		id := h.write(alice, "unrelated")
		for _, tc := range []struct {
			op, input string
			want      int64
		}{
			{OpWrite, `{"text":"lunch idea 4"}`, 10_000},
			{OpSearch, `{"query":"lunch"}`, 5_000 + 4*1_000},
			{OpSearch, `{"query":"lunch","limit":2}`, 5_000 + 2*1_000},
			{OpSearch, `{"query":"dinner"}`, 5_000},
			{OpList, `{"limit":1}`, 5_000},
			{OpDelete, `{"memoryId":"` + id + `"}`, 5_000},
		} {
			res, err := h.invoke(alice, tc.op, tc.input)
			if err != nil || res.ChargedMicro != tc.want {
				t.Errorf("%s %s: charged %d, %v; want %d", tc.op, tc.input, res.ChargedMicro, err, tc.want)
			}
		}
		// A refused call charges nothing: it has no result at all.
		res, err := h.invoke(alice, OpDelete, `{"memoryId":"`+id+`"}`)
		if err == nil || res.ChargedMicro != 0 || res.Output != nil {
			t.Errorf("failed delete: %+v, %v", res, err)
		}
	})
}

func TestInvokeRunsNothingWithoutAHoldForThePrice(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		r := requestOf(alice)
		r.OperationID, r.Input, r.MaxChargeMicro = OpWrite, json.RawMessage(`{"text":"unpaid"}`), prices[OpWrite]-1
		if _, err := h.svc.Invoke(context.Background(), r); err == nil {
			t.Fatal("a write ran with a hold below its price")
		}
		if got := h.listAll(alice); len(got) != 0 {
			t.Fatalf("the unpaid write was stored: %v", got)
		}
	})
}
