package bench

import (
	"context"
	"errors"
	"maps"
	"sync"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
	"platformapi/shared/adapters/store/throttlestore"
	"platformapi/shared/domain/audit"
)

// meter wraps the item store and records, for every call, the DynamoDB
// operation it becomes, how many items it touches and the request units
// DynamoDB would bill for them. The SDK's call counter sees round trips but
// not items, and a BatchGetItem or TransactWriteItems is billed per item, so
// the units are counted here, where the items are in hand.
//
// Item sizes and units follow DynamoDB's rules (throttlestore's units.go).
// It also keeps what every item was billed, for the capacity model: the
// busiest item a request touches bounds its rate (capacity.go). An item the meter has not seen
// whole (the target of a transactional update, delete or condition check)
// is sized as the biggest of what it saw of it and what the write sets,
// which for the small counters and leases of the hot path is the item.
type meter struct {
	store.Store
	mu    sync.Mutex
	ops   map[string]opUsage
	items map[string]*itemUsage // by Key.String()
	sizes throttlestore.Sizes
	// eventBytes and events are the audit event items written, sized as
	// DynamoDB sizes them (Reset keeps them).
	eventBytes, events int
}

// sawEvent counts an audit event item written.
func (m *meter) sawEvent(it store.Item) {
	if !audit.IsEventPK(it.Key().PK) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.eventBytes += throttlestore.ItemSize(it)
	m.events++
}

// EventItemBytes is the mean DynamoDB size of the audit event items
// written; zero when none was.
func (m *meter) EventItemBytes() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == 0 {
		return 0
	}
	return float64(m.eventBytes) / float64(m.events)
}

// itemUsage is what one item was billed and how many calls touched it. A
// query is billed to its partition under the sort key "(query)".
type itemUsage struct {
	Key        store.Key
	Calls      float64
	ReadUnits  float64
	WriteUnits float64
}

// opUsage is what one DynamoDB operation cost over some requests.
type opUsage struct {
	Calls      float64 `json:"calls"`
	Items      float64 `json:"items"`
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
}

func newMeter(st store.Store) *meter {
	return &meter{Store: st, ops: map[string]opUsage{}, items: map[string]*itemUsage{}}
}

// Snapshot returns the calls per operation, named as the SDK's counter names
// them, so that the meter can stand in for it on embedded storage.
func (m *meter) Snapshot() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.ops))
	for op, u := range m.ops {
		out[op] = int(u.Calls)
	}
	return out
}

// Usage returns the usage per operation so far.
func (m *meter) Usage() map[string]opUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.ops)
}

// Reset forgets the usage (not the item sizes, which stay true).
func (m *meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.ops)
	clear(m.items)
}

// Items returns what each item was billed so far.
func (m *meter) Items() []itemUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]itemUsage, 0, len(m.items))
	for _, u := range m.items {
		out = append(out, *u)
	}
	return out
}

// bill adds one call's units on the item at k.
func (m *meter) bill(k store.Key, rru, wru float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.items[k.String()]
	if u == nil {
		u = &itemUsage{Key: k}
		m.items[k.String()] = u
	}
	u.Calls++
	u.ReadUnits += rru
	u.WriteUnits += wru
}

func (m *meter) record(op string, items int, rru, wru float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.ops[op]
	u.Calls++
	u.Items += float64(items)
	u.ReadUnits += rru
	u.WriteUnits += wru
	m.ops[op] = u
}

// known is the size last seen of the item at k, at least floor.
func (m *meter) known(k store.Key, floor int) int {
	n, _ := m.sizes.Known(k)
	return max(n, floor)
}

func (m *meter) Get(ctx context.Context, k store.Key) (store.Item, error) {
	it, err := m.Store.Get(ctx, k)
	size := 0
	if err == nil {
		size = m.sizes.Seen(it)
	}
	m.bill(k, throttlestore.ReadUnits(size), 0)
	m.record("DynamoDB.GetItem", 1, throttlestore.ReadUnits(size), 0)
	return it, err
}

func (m *meter) BatchGet(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	got, err := m.Store.BatchGet(ctx, keys)
	rru := 0.0
	for _, k := range keys {
		size := 0
		if it, ok := got[k.String()]; ok {
			size = m.sizes.Seen(it)
		}
		m.bill(k, throttlestore.ReadUnits(size), 0)
		rru += throttlestore.ReadUnits(size)
	}
	m.record("DynamoDB.BatchGetItem", len(keys), rru, 0)
	return got, err
}

func (m *meter) Query(ctx context.Context, q store.Query) (store.Page, error) {
	page, err := m.Store.Query(ctx, q)
	size := 0
	for _, it := range page.Items {
		size += m.sizes.Seen(it)
	}
	// A query is billed on the sum of what it read, rounded up once.
	m.bill(store.Key{PK: q.PK, SK: "(query)"}, throttlestore.ReadUnits(size), 0)
	m.record("DynamoDB.Query", len(page.Items), throttlestore.ReadUnits(size), 0)
	return page, err
}

func (m *meter) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	size := m.known(it.Key(), throttlestore.ItemSize(it))
	err := m.Store.Put(ctx, it, conds...)
	if err == nil {
		m.sizes.Seen(it)
		m.sawEvent(it)
	}
	m.bill(it.Key(), 0, throttlestore.WriteUnits(size))
	m.record("DynamoDB.PutItem", 1, 0, throttlestore.WriteUnits(size))
	return err
}

func (m *meter) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	size := m.known(k, throttlestore.UpdateSize(k, u))
	it, err := m.Store.Update(ctx, k, u, conds...)
	if err == nil {
		size = max(size, m.sizes.Seen(it))
	}
	m.bill(k, 0, throttlestore.WriteUnits(size))
	m.record("DynamoDB.UpdateItem", 1, 0, throttlestore.WriteUnits(size))
	return it, err
}

func (m *meter) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	err := m.Store.Delete(ctx, k, conds...)
	wru := throttlestore.WriteUnits(m.known(k, throttlestore.KeySize(k)))
	m.bill(k, 0, wru)
	m.record("DynamoDB.DeleteItem", 1, 0, wru)
	return err
}

// Transact is billed two write units per KB of every member, condition
// checks included, except what dynamostore sends as a plain conditional
// write, billed once.
func (m *meter) Transact(ctx context.Context, ops []store.Op) error {
	if dynamostore.SentAlone(ops) {
		return m.single(ctx, ops[0])
	}
	wru := 0.0
	for _, op := range ops {
		size := throttlestore.MemberSize(op, m.known(op.Key, 0))
		m.bill(op.Key, 0, 2*throttlestore.WriteUnits(size))
		wru += 2 * throttlestore.WriteUnits(size)
	}
	err := m.Store.Transact(ctx, ops)
	if err == nil {
		for _, op := range ops {
			if op.Kind == store.OpPut {
				m.sizes.Seen(op.Item)
				m.sawEvent(op.Item)
			}
		}
	}
	m.record("DynamoDB.TransactWriteItems", len(ops), 0, wru)
	return err
}

// single meters a one-member transaction as the conditional write it is.
func (m *meter) single(ctx context.Context, op store.Op) error {
	var err error
	switch op.Kind {
	case store.OpPut:
		err = m.Put(ctx, op.Item, op.Conds...)
	case store.OpUpdate:
		_, err = m.Update(ctx, op.Key, op.Update, op.Conds...)
	default:
		err = m.Delete(ctx, op.Key, op.Conds...)
	}
	if errors.Is(err, store.ErrConditionFailed) {
		return &store.TxError{Index: 0}
	}
	return err
}
