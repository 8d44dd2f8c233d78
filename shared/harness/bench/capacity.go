package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/throttlestore"
	"platformapi/shared/groups/credits"
)

// The capacity model (see docs/storage-design.md): DynamoDB serves at most
// 3,000 read and 1,000 write units a second for one partition key, and no
// adaptive split raises that for a single item. A request class is bounded
// by the busiest item, and, before DynamoDB splits a hot partition by sort
// key (or when its new items arrive in sort-key order, which a split cannot
// spread), by the busiest partition key it touches. Both bounds come from
// the units the meter billed to each item over some requests of the class.

// capacityCase is one request class's storage load on the items it keeps
// touching, and the rates DynamoDB's per-item and per-partition limits allow.
type capacityCase struct {
	Name string `json:"name"`
	// Items is the busiest item of each item class the requests touched.
	Items []capacityItem `json:"items"`
	// CeilingPerItem is the lowest item ceiling; CeilingPerPartition the
	// lowest partition-key ceiling, what throttlestore enforces.
	CeilingPerItem      float64 `json:"ceilingPerItem"`
	CeilingPerPartition float64 `json:"ceilingPerPartition"`
	BusiestItem         string  `json:"busiestItem"`
	BusiestPartition    string  `json:"busiestPartition"`
}

// capacityItem is one item class: the units one request spends on its
// busiest item and on that item's partition key, and the requests a second
// each allows. Spread is how many parts (copies or shards, each its own
// partition key) the item's load was seen spread over.
type capacityItem struct {
	Class               string  `json:"class"`
	Spread              int     `json:"spread"`
	ReadUnits           float64 `json:"readUnits"`
	WriteUnits          float64 `json:"writeUnits"`
	PartitionReadUnits  float64 `json:"partitionReadUnits"`
	PartitionWriteUnits float64 `json:"partitionWriteUnits"`
	CeilingPerItem      float64 `json:"ceilingPerItem"`
	CeilingPerPartition float64 `json:"ceilingPerPartition"`
	// ReadPerCall and WritePerCall are what one operation on one part
	// billed, on average; CeilingOneCall the requests a second the parts
	// allow when each request makes one such call. Batches make a window
	// shard's units per request a fraction of its units per write, and a
	// key served by many processes at a few requests a second each counts
	// every request alone: this is its ceiling then (docs/limits.md).
	ReadPerCall    float64 `json:"readPerCall"`
	WritePerCall   float64 `json:"writePerCall"`
	CeilingOneCall float64 `json:"ceilingOneCall"`
}

// itemClass names an item by the fixed parts of its key: a '#'-separated
// segment that is not a lowercase word holds an id, a time or a selector
// and becomes "…", so key#k_1/key and key#k_2/key are one class.
func itemClass(k store.Key) string {
	return classPart(k.PK) + " / " + classPart(k.SK)
}

func classPart(s string) string {
	parts := strings.Split(s, "#")
	for i, p := range parts {
		if strings.Trim(p, "abcdefghijklmnopqrstuvwxyz()") != "" {
			parts[i] = "…"
		}
	}
	return strings.Join(parts, "#")
}

// ceiling is the requests a second that read and write units per request
// allow under one partition's budget.
func ceiling(read, write float64) float64 {
	c := math.Inf(1)
	if read > 0 {
		c = min(c, throttlestore.PartitionReadUnits/read)
	}
	if write > 0 {
		c = min(c, throttlestore.PartitionWriteUnits/write)
	}
	return c
}

// spreadPK is the partition key a sharded or replicated item is a part of:
// its own, less a trailing numeric segment (key#k_1#3 is copy 3 of
// key#k_1, lim#k_1#*#5 shard 5 of a window, aud#a#20261126#2 shard 2 of a
// day) or a balance slice's (acct#a#s5 is slice 5 of acct#a, whose slice 0
// is acct#a itself). Every such spread in this design picks its part
// evenly (in turn, or by a random id), so the model takes the load as even
// over the parts it saw.
func spreadPK(pk string) string {
	i := strings.LastIndexByte(pk, '#')
	if i < 0 || i == len(pk)-1 {
		return pk
	}
	part := pk[i+1:]
	if strings.HasPrefix(pk, "acct#") && len(part) > 1 && part[0] == 's' {
		part = part[1:]
	}
	if strings.Trim(part, "0123456789") != "" {
		return pk
	}
	return pk[:i]
}

// capacityOf makes the case from what n requests billed each item (a case
// that touched no item has ceilings of 0, to stay encodable). Items are
// first gathered into their spreads (spreadPK). With shared set, only
// spreads every request touched count: the class is one account driven
// through many keys, whose own items each see a share.
func capacityOf(name string, items []itemUsage, n int, shared bool) capacityCase {
	per := float64(n)
	type load struct {
		read, write, calls float64
		billedR, billedW   float64
		parts              map[string]bool
	}
	add := func(m map[store.Key]*load, k store.Key, u itemUsage) {
		l := m[k]
		if l == nil {
			l = &load{parts: map[string]bool{}}
			m[k] = l
		}
		l.read += u.ReadUnits / per
		l.write += u.WriteUnits / per
		l.calls += u.Calls
		l.billedR += u.ReadUnits
		l.billedW += u.WriteUnits
		l.parts[u.Key.PK] = true
	}
	spreads, parts := map[store.Key]*load{}, map[store.Key]*load{}
	for _, u := range items {
		add(spreads, store.Key{PK: spreadPK(u.Key.PK), SK: u.Key.SK}, u)
		add(parts, store.Key{PK: spreadPK(u.Key.PK)}, u)
	}
	byClass := map[string]capacityItem{}
	c := capacityCase{Name: name, CeilingPerItem: math.Inf(1), CeilingPerPartition: math.Inf(1)}
	for k, l := range spreads {
		if shared && l.calls < per {
			continue
		}
		p := parts[store.Key{PK: k.PK}]
		copies, pcopies := float64(len(l.parts)), float64(len(p.parts))
		it := capacityItem{
			Class: itemClass(k), Spread: len(l.parts),
			ReadUnits: l.read / copies, WriteUnits: l.write / copies,
			PartitionReadUnits: p.read / pcopies, PartitionWriteUnits: p.write / pcopies,
		}
		it.CeilingPerItem = ceiling(it.ReadUnits, it.WriteUnits)
		it.CeilingPerPartition = ceiling(it.PartitionReadUnits, it.PartitionWriteUnits)
		if l.calls > 0 {
			it.ReadPerCall, it.WritePerCall = l.billedR/l.calls, l.billedW/l.calls
			it.CeilingOneCall = round(copies*ceiling(it.ReadPerCall, it.WritePerCall), 0)
		}
		if old, ok := byClass[it.Class]; !ok || it.CeilingPerPartition < old.CeilingPerPartition ||
			it.CeilingPerPartition == old.CeilingPerPartition && it.CeilingPerItem < old.CeilingPerItem {
			byClass[it.Class] = it
		}
	}
	for _, it := range byClass {
		c.Items = append(c.Items, it)
	}
	slices.SortFunc(c.Items, func(a, b capacityItem) int {
		if a.CeilingPerPartition != b.CeilingPerPartition {
			return int(math.Copysign(1, a.CeilingPerPartition-b.CeilingPerPartition))
		}
		return strings.Compare(a.Class, b.Class)
	})
	// Ties go to the first class in that order.
	for _, it := range c.Items {
		if it.CeilingPerItem < c.CeilingPerItem {
			c.CeilingPerItem, c.BusiestItem = it.CeilingPerItem, it.Class
		}
		if it.CeilingPerPartition < c.CeilingPerPartition {
			c.CeilingPerPartition, c.BusiestPartition = it.CeilingPerPartition, it.Class
		}
	}
	if len(c.Items) == 0 {
		c.CeilingPerItem, c.CeilingPerPartition = 0, 0
	}
	c.CeilingPerItem, c.CeilingPerPartition = round(c.CeilingPerItem, 0), round(c.CeilingPerPartition, 0)
	return c
}

// The capacity cases, in the order the table prints them.
const (
	capKey          = "perKey"
	capAccount      = "perAccount"
	capLimitedKey   = "perLimitedKey"
	capBalance      = "balancePerAccount"
	capChargedCall  = "perChargedCall"
	capChargedSlice = "perChargedCallSliced"
	capAuditAccount = "auditPerAccount"
)

var capacityOrder = []string{capKey, capAccount, capLimitedKey, capBalance, capChargedCall, capChargedSlice, capAuditAccount}

// benchSlices is the N of the sliced account the model charges: the N
// docs/storage-design.md prices, 30 slices carrying 3,000 charged calls a
// second by units with a quarter spare.
const benchSlices = 41

// The authenticated classes are GET /v1/services: authentication (and the
// limit) alone, the catalogue being in memory.
var capacityLabels = map[string]string{
	capKey:          "authenticated request, one key (no limit)",
	capAccount:      "authenticated request, one account (4 keys, shared items)",
	capLimitedKey:   "authenticated request, one key with a requestsPerMinute limit",
	capBalance:      "GET /v1/credits/balance, one account (reads the account item)",
	capChargedCall:  "charged call, one account (hold + capture)",
	capChargedSlice: fmt.Sprintf("charged call, one account of %d slices (hold + capture)", benchSlices),
	capAuditAccount: "audit event stored by audit-ingest, one account",
}

// accountKeys are the bench account's keys that the capacity model drives:
// limited is the depth-3 key with a "*" limit, plain are unlimited keys
// beside it.
type accountKeys struct {
	accountID string
	limited   string
	plain     []string
}

// siblingKeys creates n unlimited keys under parent (the limited key's
// parent) and returns their secrets.
func siblingKeys(c apiClient, parent string, n int) ([]string, error) {
	var out []string
	for i := range n {
		header := map[string]string{"Authorization": "Bearer " + parent, "Idempotency-Key": fmt.Sprintf("bench-sibling-%04d", i)}
		body, err := c.expect(http.StatusCreated, http.MethodPost, "/v1/api-keys", header, map[string]any{"label": fmt.Sprintf("bench sibling %d", i)})
		if err != nil {
			return nil, err
		}
		var k struct {
			Secret string `json:"secret"`
		}
		if err := json.Unmarshal(body, &k); err != nil || k.Secret == "" {
			return nil, fmt.Errorf("create sibling key: unexpected answer %s", body)
		}
		out = append(out, k.Secret)
	}
	return out, nil
}

// measureCapacity drives each request class samples times through the
// unaudited server (the audit event's store is its own class) and the
// ledger (on the bench account, and on an account of its own sliced into
// benchSlices, as an operator or the load rule slices a busy one), each on
// a reset meter, and makes the capacity cases.
func measureCapacity(ctx context.Context, c apiClient, m *meter, ak accountKeys, samples int) (map[string]capacityCase, error) {
	read := func(secret string) error {
		_, err := c.expect(http.StatusOK, http.MethodGet, "/v1/services", map[string]string{"Authorization": "Bearer " + secret}, nil)
		return err
	}
	balance := func(secret string) error {
		_, err := c.expect(http.StatusOK, http.MethodGet, balancePath, map[string]string{"Authorization": "Bearer " + secret}, nil)
		return err
	}
	ledger := credits.NewLedger(m, time.Now)
	sliced := ak.accountID + "_sliced"
	if err := m.Transact(ctx, credits.OpenAccountOps(sliced, 1_000_000_000_000, "bench", time.Now())); err != nil {
		return nil, fmt.Errorf("bench: capacity %s: %w", capChargedSlice, err)
	}
	if err := ledger.SetSlices(ctx, sliced, benchSlices); err != nil {
		return nil, fmt.Errorf("bench: capacity %s: %w", capChargedSlice, err)
	}
	charge := func(accountID string, i int) error {
		h, err := ledger.Hold(ctx, accountID, 1000, fmt.Sprintf("bench-charge-%d", i), time.Minute)
		if err != nil {
			return err
		}
		return h.Capture(ctx, 600)
	}
	cases := []struct {
		name   string
		shared bool
		send   func(i int) error
	}{
		{capKey, false, func(int) error { return read(ak.plain[0]) }},
		{capAccount, true, func(i int) error { return read(ak.plain[i%len(ak.plain)]) }},
		{capLimitedKey, false, func(int) error { return read(ak.limited) }},
		{capBalance, true, func(i int) error { return balance(ak.plain[i%len(ak.plain)]) }},
		{capChargedCall, false, func(i int) error { return charge(ak.accountID, i) }},
		{capChargedSlice, false, func(i int) error { return charge(sliced, i) }},
	}
	out := map[string]capacityCase{}
	for _, cs := range cases {
		if err := cs.send(0); err != nil {
			return nil, fmt.Errorf("bench: capacity %s: %w", cs.name, err)
		}
		m.Reset()
		n := samples * len(ak.plain)
		for i := 1; i <= n; i++ {
			if err := cs.send(i); err != nil {
				return nil, fmt.Errorf("bench: capacity %s: %w", cs.name, err)
			}
		}
		out[cs.name] = capacityOf(capacityLabels[cs.name], m.Items(), n, cs.shared)
	}
	return out, nil
}

// writeCapacityTable prints every case's busiest item of each class.
func writeCapacityTable(p func(string, ...any), r Report) {
	if len(r.Capacity) == 0 {
		return
	}
	p("Capacity: requests a second one item / one partition key allows (DynamoDB: %d RCU and %d WCU a second each), from the units billed above",
		throttlestore.PartitionReadUnits, throttlestore.PartitionWriteUnits)
	p("request class\titem class (busiest item)\tspread over\tRRU / WRU per request on one part\ton its partition key\tceiling per item\tper partition key\tRRU / WRU per call on one part\tceiling, one call a request")
	for _, name := range capacityOrder {
		c, ok := r.Capacity[name]
		if !ok {
			continue
		}
		for _, it := range c.Items {
			p("%s\t%s\t%d\t%g / %g\t%g / %g\t%s\t%s\t%g / %g\t%s", name, it.Class, it.Spread, round(it.ReadUnits, 3), round(it.WriteUnits, 3),
				round(it.PartitionReadUnits, 3), round(it.PartitionWriteUnits, 3), rate(it.CeilingPerItem), rate(it.CeilingPerPartition),
				round(it.ReadPerCall, 3), round(it.WritePerCall, 3), rate(it.CeilingOneCall))
		}
		p("%s\t%s\t\t\t\t%s\t%s", name, "ceiling: "+c.Name, rate(c.CeilingPerItem), rate(c.CeilingPerPartition))
	}
	p("")
}

func rate(x float64) string {
	if math.IsInf(x, 1) {
		return "unbounded"
	}
	return fmt.Sprintf("%.0f/s", x)
}
