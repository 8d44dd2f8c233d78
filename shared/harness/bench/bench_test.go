package bench

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
)

func TestPercentileIsTheNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := percentile(lat, c.p); got != c.want {
			t.Errorf("p%g = %s, want %s", c.p, got, c.want)
		}
	}
	if got := percentile(lat[:1], 99); got != time.Millisecond {
		t.Errorf("p99 of one sample = %s, want that sample", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %s, want 0", got)
	}
}

func TestCostPricesEveryLineAndBillsDurationPerStartedMillisecond(t *testing.T) {
	p := Prices{
		APIGatewayPerMillion: 1, LambdaPerMillion: 0.2, LambdaArmPerGBSecond: 0.00001,
		LambdaMemoryMB: 512, DynamoDBPerMillionRRU: 0.125, DynamoDBPerMillionWRU: 0.625,
	}
	c := p.PerMillion(Usage{ReadUnits: 4, WriteUnits: 2, Duration: 1500 * time.Microsecond})
	want := Cost{
		APIGateway: 1, LambdaRequests: 0.2,
		LambdaDuration: 0.5 * 0.002 * 0.00001 * 1e6, // 2 ms billed at half a GB
		DynamoDBReads:  0.5, DynamoDBWrites: 1.25,
	}
	for i, l := range c.Lines() {
		if w := want.Lines()[i]; math.Abs(l.USD-w.USD) > 1e-12 {
			t.Errorf("%s = %g, want %g", l.Name, l.USD, w.USD)
		}
	}
	if got := c.Total(); math.Abs(got-2.96) > 1e-12 {
		t.Errorf("total = %g, want 2.96", got)
	}
	if d := c.Dominant(); !strings.HasPrefix(d.Name, "DynamoDB write") {
		t.Errorf("dominant = %s, want the DynamoDB writes", d.Name)
	}
}

func TestMeterBillsPerItemAndTransactionsTwice(t *testing.T) {
	raw, err := boltstore.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	m := newMeter(raw)
	ctx := context.Background()
	big := store.NewItem(store.Key{PK: "p", SK: "big"})
	big["doc"] = make([]byte, 5000) // two read units of 4 KB, five write units of 1 KB
	if err := m.Put(ctx, big); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, big.Key()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.BatchGet(ctx, []store.Key{big.Key(), {PK: "p", SK: "absent"}}); err != nil {
		t.Fatal(err)
	}
	counter := store.Key{PK: "p", SK: "counter"}
	err = m.Transact(ctx, []store.Op{
		store.UpdateOp(counter, store.Update{Add: map[string]int64{"count": 1}}),
		store.CheckOp(big.Key(), store.Exists()),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]opUsage{
		"DynamoDB.PutItem":            {Calls: 1, Items: 1, WriteUnits: 5},
		"DynamoDB.GetItem":            {Calls: 1, Items: 1, ReadUnits: 2},
		"DynamoDB.BatchGetItem":       {Calls: 1, Items: 2, ReadUnits: 3}, // an absent item costs one
		"DynamoDB.TransactWriteItems": {Calls: 1, Items: 2, WriteUnits: 2*1 + 2*5},
	}
	got := m.Usage()
	for op, w := range want {
		if got[op] != w {
			t.Errorf("%s: %+v, want %+v", op, got[op], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("operations %v, want %d of them", got, len(want))
	}
}
