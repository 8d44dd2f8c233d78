// Package store is the item-store port: a small key-value model shaped like
// DynamoDB's (partition key, sort key, typed attributes, conditional writes,
// atomic counters, transactions, expiry). Domain packages persist through it
// and never see an adapter; adapters (boltstore, dynamostore) implement it and
// must pass the conformance suite in storetest.
//
// Expiry: an item whose ExpiresAt attribute holds a unix time at or before now
// is treated as absent by every operation, reads, queries and conditions alike,
// whether or not the adapter has physically deleted it yet. Correctness must
// never depend on physical deletion.
package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
)

// Reserved attribute names. Adapters map them to their own key schema.
const (
	AttrPK        = "pk"
	AttrSK        = "sk"
	AttrExpiresAt = "expiresAt" // int64 unix seconds; absent or 0 means never
)

// Errors returned by every adapter; callers test them with errors.Is.
var (
	ErrNotFound        = errors.New("store: item not found")
	ErrConditionFailed = errors.New("store: condition failed")
	// ErrUnavailable means the backing service throttled or failed; the
	// operation had no effect and may be retried later.
	ErrUnavailable = errors.New("store: backend unavailable")
)

// Key addresses one item.
type Key struct {
	PK string
	SK string
}

func (k Key) String() string { return k.PK + "|" + k.SK }

// Item is one record. Values are string, int64, bool or []byte; any other
// type is a programming error that adapters reject.
type Item map[string]any

// Key returns the item's key attributes.
func (it Item) Key() Key {
	pk, _ := it[AttrPK].(string)
	sk, _ := it[AttrSK].(string)
	return Key{PK: pk, SK: sk}
}

// String returns a string attribute or "".
func (it Item) String(name string) string { s, _ := it[name].(string); return s }

// Int returns a numeric attribute or 0.
func (it Item) Int(name string) int64 { n, _ := it[name].(int64); return n }

// Bytes returns a binary attribute or nil.
func (it Item) Bytes(name string) []byte { b, _ := it[name].([]byte); return b }

// Bool returns a boolean attribute or false.
func (it Item) Bool(name string) bool { b, _ := it[name].(bool); return b }

// Has reports whether the attribute is present.
func (it Item) Has(name string) bool { _, ok := it[name]; return ok }

// Expired reports whether the item is past its expiry at unix time now.
func (it Item) Expired(now int64) bool {
	e := it.Int(AttrExpiresAt)
	return e != 0 && e <= now
}

// Clone is a copy of it that its holder may change, []byte values
// included (strings cannot change).
func (it Item) Clone() Item {
	out := maps.Clone(it)
	for name, v := range out {
		if b, ok := v.([]byte); ok {
			out[name] = bytes.Clone(b)
		}
	}
	return out
}

// NewItem builds an item with its key set.
func NewItem(k Key) Item { return Item{AttrPK: k.PK, AttrSK: k.SK} }

// CondKind enumerates the condition forms the port supports. The set is kept
// small so that every form maps onto one DynamoDB condition expression.
type CondKind int

const (
	CondExists       CondKind = iota + 1 // the item exists (and has not expired)
	CondNotExists                        // the item is absent or expired
	CondAttrEquals                       // Attr == Value
	CondAttrNotExist                     // Attr is absent (item may or may not exist)
	CondNumBelow                         // Attr (absent counts as 0) < Value
	CondNumAtLeast                       // Attr (absent counts as 0) >= Value
	CondFence                            // as CondNumBelow; see Fence
)

// Cond is one condition; a write's conditions are ANDed. An absent or
// expired item has no attributes, exactly as in DynamoDB: on it Exists and
// AttrEquals fail, NotExists and AttrNotExists hold, and a numeric condition
// sees 0 (so NumBelow(attr, n) holds for n > 0, which is what a fresh counter
// needs).
type Cond struct {
	Kind  CondKind
	Attr  string
	Value any
}

func Exists() Cond                         { return Cond{Kind: CondExists} }
func NotExists() Cond                      { return Cond{Kind: CondNotExists} }
func AttrEquals(attr string, v any) Cond   { return Cond{Kind: CondAttrEquals, Attr: attr, Value: v} }
func AttrNotExists(attr string) Cond       { return Cond{Kind: CondAttrNotExist, Attr: attr} }
func NumBelow(attr string, n int64) Cond   { return Cond{Kind: CondNumBelow, Attr: attr, Value: n} }
func NumAtLeast(attr string, n int64) Cond { return Cond{Kind: CondNumAtLeast, Attr: attr, Value: n} }

// Fence holds where NumBelow(attr, v) does. An Update that sets attr to v
// under it is applied at most once however often it is sent: when its
// conditions fail on an item whose attr already is v, Update answers that
// item as applied. Its writer uses each v once and in increasing order, so
// finding attr at v means an earlier attempt of this very write applied:
// on DynamoDB, the SDK resends a call whose answer was lost, and a plain
// ADD would then count twice where a fenced one costs one write unit and
// counts once (a transaction's client request token costs two).
func Fence(attr string, v int64) Cond { return Cond{Kind: CondFence, Attr: attr, Value: v} }

// Update changes some attributes of one item. An update of an absent or
// expired item creates it fresh (only the key plus Set and Add), like
// DynamoDB's UpdateItem on a missing item, unless a condition forbids it.
type Update struct {
	Set    map[string]any
	Add    map[string]int64 // atomic increments; an absent attribute starts at 0
	Remove []string
}

// OpKind enumerates transaction members.
type OpKind int

const (
	OpPut OpKind = iota + 1
	OpUpdate
	OpDelete
	OpCheck // a condition on an item that is not written
)

// Op is one member of a transaction.
type Op struct {
	Kind   OpKind
	Key    Key  // for OpUpdate, OpDelete, OpCheck
	Item   Item // for OpPut
	Update Update
	Conds  []Cond
}

func PutOp(it Item, conds ...Cond) Op { return Op{Kind: OpPut, Key: it.Key(), Item: it, Conds: conds} }
func UpdateOp(k Key, u Update, conds ...Cond) Op {
	return Op{Kind: OpUpdate, Key: k, Update: u, Conds: conds}
}
func DeleteOp(k Key, conds ...Cond) Op { return Op{Kind: OpDelete, Key: k, Conds: conds} }
func CheckOp(k Key, conds ...Cond) Op  { return Op{Kind: OpCheck, Key: k, Conds: conds} }

// TxError reports which member of a transaction failed its condition. It
// matches ErrConditionFailed with errors.Is.
type TxError struct {
	Index int // position in the ops slice
}

func (e *TxError) Error() string {
	return fmt.Sprintf("store: transaction member %d: condition failed", e.Index)
}
func (e *TxError) Is(target error) bool { return target == ErrConditionFailed }

// MaxTransactItems is the most members one transaction may hold (DynamoDB's limit).
const MaxTransactItems = 100

// Query reads one partition in sort-key order.
type Query struct {
	PK      string
	Prefix  string // only sort keys beginning with Prefix
	After   string // exclusive start: only sort keys greater (or, descending, less) than After
	Limit   int    // at most this many items; 0 means no limit
	Reverse bool   // descending sort-key order
}

// Page is one page of a query. More is true when items beyond Limit exist.
type Page struct {
	Items []Item
	More  bool
}

// SharedReader answers items without copying them, to a caller that only
// reads them and never keeps or changes them: the embedded store answers
// from its cache. Authentication reads a kilobyte of key document per key
// on every request, and a copy cost more than the rest of a cached read, so
// a process whose store offers this hands it to the kernel.
type SharedReader interface {
	BatchGetShared(ctx context.Context, keys []Key) (map[string]Item, error)
}

// Store is the item-store port. Reads are strongly consistent.
type Store interface {
	// Get returns the item or ErrNotFound (also for an expired item).
	Get(ctx context.Context, k Key) (Item, error)
	// BatchGet returns the items that exist, keyed by Key.String(); absent and
	// expired items are omitted. At most 100 keys.
	BatchGet(ctx context.Context, keys []Key) (map[string]Item, error)
	// Put writes the whole item, replacing any previous one, if conds hold;
	// otherwise ErrConditionFailed.
	Put(ctx context.Context, it Item, conds ...Cond) error
	// Update applies u if conds hold and returns the item as it is afterwards;
	// otherwise ErrConditionFailed.
	Update(ctx context.Context, k Key, u Update, conds ...Cond) (Item, error)
	// Delete removes the item if conds hold; deleting an absent item with no
	// conditions succeeds.
	Delete(ctx context.Context, k Key, conds ...Cond) error
	// Query reads a partition in sort-key order, skipping expired items.
	Query(ctx context.Context, q Query) (Page, error)
	// Transact applies all ops or none. A failed condition returns a *TxError.
	// At most MaxTransactItems ops, each on a distinct key.
	Transact(ctx context.Context, ops []Op) error
	// Close releases the adapter's resources.
	Close() error
}

// AttrDoc holds a record's JSON document. The domain keeps its records as
// documents and lifts into attributes only what conditions need.
const AttrDoc = "doc"

// SetDoc stores v as the item's document.
func (it Item) SetDoc(v any) { it[AttrDoc] = DocOf(v) }

// DocOf is v's document, for an Update that replaces it. Records are plain
// structs whose encoding cannot fail; one that does is a programming error,
// and it panics rather than store an empty document over the record.
func DocOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: a record's document does not encode: %v", err))
	}
	return b
}

// Doc decodes the item's document into v.
func (it Item) Doc(v any) error { return json.Unmarshal(it.Bytes(AttrDoc), v) }
