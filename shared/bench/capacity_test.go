package bench

import (
	"context"
	"encoding/json"
	"testing"

	"platformapi/shared/store"
)

func TestItemClassHidesIdsAndTimes(t *testing.T) {
	for k, want := range map[store.Key]string{
		{PK: "key#k_1", SK: "key"}:              "key#… / key",
		{PK: "acct#a_1", SK: "account"}:         "acct#… / account",
		{PK: "lim#k_1#*", SK: "rpm#1800000000"}: "lim#…#… / rpm#…",
		{PK: "aud#a_1#20261126#3", SK: "evt_1"}: "aud#…#…#… / …",
		{PK: "acct#a_1", SK: "lgr#1#2"}:         "acct#… / lgr#…#…",
	} {
		if got := itemClass(k); got != want {
			t.Errorf("itemClass(%v) = %q; want %q", k, got, want)
		}
	}
}

// TestTheBusiestItemBoundsARequestClass: per item, 3,000 reads and 1,000
// writes a second; per partition key, the sum of its items.
func TestTheBusiestItemBoundsARequestClass(t *testing.T) {
	items := []itemUsage{
		{Key: store.Key{PK: "key#k_1", SK: "key"}, Calls: 10, ReadUnits: 10},
		{Key: store.Key{PK: "acct#a_1", SK: "account"}, Calls: 10, ReadUnits: 10, WriteUnits: 20},
		{Key: store.Key{PK: "acct#a_1", SK: "lgr#1"}, Calls: 1, WriteUnits: 10},
	}
	c := capacityOf("x", items, 10, false)
	if c.CeilingPerItem != 500 || c.BusiestItem != "acct#… / account" {
		t.Fatalf("per item %v at %q; want 500 at the account item", c.CeilingPerItem, c.BusiestItem)
	}
	if c.CeilingPerPartition != 333 {
		t.Fatalf("per partition %v; want 333 (3 write units a request on acct#a_1)", c.CeilingPerPartition)
	}
	shared := capacityOf("x", items, 10, true)
	for _, it := range shared.Items {
		if it.Class == "acct#… / lgr#…" {
			t.Fatalf("an item not every request touched counted as shared: %+v", it)
		}
	}
}

// TestCapacityModelFindsTheHotItemsOfEachClass runs the model's requests
// counted at the port (against the emulator when the run has one, as make
// bench does): today every authenticated request reads its key chain and the
// account item, so one item bounds a key and an account alike, and the
// account item bounds charged calls.
func TestCapacityModelFindsTheHotItemsOfEachClass(t *testing.T) {
	emulator := emulatorEndpoint()
	res, err := measureStorage(context.Background(), t.TempDir(), emulator, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range capacityOrder {
		for _, it := range res.Capacity[name].Items {
			t.Logf("%s\t%s\t%g/%g\t%g/%g\t%g\t%g", name, it.Class, it.ReadUnits, it.WriteUnits,
				it.PartitionReadUnits, it.PartitionWriteUnits, round(it.CeilingPerItem, 0), round(it.CeilingPerPartition, 0))
		}
	}
	if _, err := json.Marshal(res.Capacity); err != nil {
		t.Fatalf("the report cannot carry the capacity cases: %v", err)
	}
	classes := func(name string) map[string]capacityItem {
		out := map[string]capacityItem{}
		for _, it := range res.Capacity[name].Items {
			out[it.Class] = it
		}
		return out
	}
	for _, name := range []string{capKey, capAccount, capLimitedKey} {
		got := classes(name)
		for _, hot := range []string{"key#… / key", "acct#… / account"} {
			if got[hot].ReadUnits != 1 {
				t.Errorf("%s: %s read %v units a request; want 1 (%v)", name, hot, got[hot].ReadUnits, got)
			}
		}
		want := 3000.0
		if name == capLimitedKey && emulator != "" {
			want = 1000 // one write of the rate window a request
		}
		if c := res.Capacity[name].CeilingPerItem; c != want {
			t.Errorf("%s: ceiling per item %v; want %v", name, c, want)
		}
	}
	if emulator != "" {
		// The embedded server keeps windows in memory (docs/limits.md).
		if w := classes(capLimitedKey)["lim#…#… / rpm#…"]; w.WriteUnits != 1 {
			t.Errorf("the rate window wrote %v units a request; want 1", w.WriteUnits)
		}
	}
	if c := res.Capacity[capChargedCall]; c.BusiestItem != "acct#… / account" || c.CeilingPerItem > 500 {
		t.Errorf("charged call: busiest item %q at %v; want the account item at most 500", c.BusiestItem, c.CeilingPerItem)
	}
	if c := res.Capacity[capAuditAccount]; c.BusiestPartition != "aud#…#…#… / …" {
		t.Errorf("audit: busiest partition %q; want an audit shard", c.BusiestPartition)
	}
}
