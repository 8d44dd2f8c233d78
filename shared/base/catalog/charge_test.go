package catalog

import "testing"

func TestAMeteredChargeIsUnitsTimesRatesCappedAtThePrice(t *testing.T) {
	op := Operation{PriceMicro: 1000, Rates: []Rate{{Unit: UnitRowRead, PriceMicro: 1}, {Unit: UnitRowWritten, PriceMicro: 10}}}
	for _, c := range []struct {
		name  string
		units map[string]int64
		want  int64
	}{
		{"nothing consumed costs nothing", nil, 0},
		{"reads at their rate", map[string]int64{UnitRowRead: 7}, 7},
		{"reads and writes add up", map[string]int64{UnitRowRead: 7, UnitRowWritten: 3}, 37},
		{"exactly the cap", map[string]int64{UnitRowWritten: 100}, 1000},
		{"beyond the cap is the cap", map[string]int64{UnitRowRead: 999, UnitRowWritten: 50}, 1000},
		{"a huge count does not overflow", map[string]int64{UnitRowWritten: 1 << 62}, 1000},
		{"an unknown unit is free", map[string]int64{"cpu": 5}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := op.Charge(c.units); got != c.want {
				t.Fatalf("Charge(%v) = %d, want %d", c.units, got, c.want)
			}
		})
	}
}

func TestDatabaseOperationsArePricedPerRow(t *testing.T) {
	svc, ok := Lookup("core-database")
	if !ok || !svc.Available {
		t.Fatal("core-database must be listed and available")
	}
	for _, id := range []string{"databases.query", "databases.actions"} {
		op, ok := svc.Op(id)
		if !ok || op.PriceMicro <= 0 || len(op.Rates) == 0 {
			t.Fatalf("%s must have a maximum price and per-row rates: %+v", id, op)
		}
	}
}
