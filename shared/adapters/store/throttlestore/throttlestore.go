// Package throttlestore wraps an item store with DynamoDB's per-partition
// throughput limits, scaled down, so that a test or a load run on one
// machine meets the hot items a real table would throttle (see
// docs/storage-design.md). DynamoDB serves at most 3,000 read units and
// 1,000 write units a second for one partition key, and no adaptive split
// raises that for a single item; with the default factor of 100 this store
// serves 30 and 10. An operation that finds a partition it touches out of
// units has no effect and fails with the error the DynamoDB adapter returns
// for ProvisionedThroughputExceededException, so callers behave exactly as
// on AWS.
//
// Units are counted as DynamoDB bills them (see units.go): a read per 4 KB,
// a write per KB of the larger of the item before and after, every member of
// a transaction twice (condition checks included) except a lone write that
// the DynamoDB adapter sends as a plain conditional write; a query once on
// the sum of what it read. A failed condition still spends its units, as on
// DynamoDB. A read is admitted on the size last seen of its items (one unit
// for one never seen) and charged its true size once it has it, which may
// leave the partition in debt for the next second; a write looks up the size
// of an item it has not seen in the inner store, unbilled.
package throttlestore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/dynamostore"
)

// DynamoDB's per-partition-key ceilings, in request units a second.
const (
	PartitionReadUnits  = 3000
	PartitionWriteUnits = 1000
)

// DefaultFactor is how many times smaller than DynamoDB's the default
// budgets are: 30 read and 10 write units a second per partition key.
const DefaultFactor = 100

// Store is the throttling wrapper.
type Store struct {
	store.Store
	now         func() time.Time
	read, write float64 // units a second per partition key

	mu    sync.Mutex
	parts map[string]*partition // by partition key
	sizes Sizes
}

// partition is one partition key's two token buckets, each holding at most
// one second of its rate, and what it served and refused.
type partition struct {
	read, write float64
	at          time.Time
	stats       Partition
}

// Partition is what one partition key served and refused.
type Partition struct {
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
	Throttled  int     `json:"throttled"`
}

// Option configures a Store.
type Option func(*Store)

// WithClock replaces time.Now as the judge of refills.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithFactor serves DynamoDB's per-partition ceilings divided by factor.
func WithFactor(factor float64) Option {
	return func(s *Store) { s.read, s.write = PartitionReadUnits/factor, PartitionWriteUnits/factor }
}

// WithUnits sets the read and write units a second of every partition key.
func WithUnits(read, write float64) Option {
	return func(s *Store) { s.read, s.write = read, write }
}

// New wraps inner with the default budgets (DefaultFactor).
func New(inner store.Store, opts ...Option) *Store {
	s := &Store{Store: inner, now: time.Now, parts: map[string]*partition{}}
	WithFactor(DefaultFactor)(s)
	for _, o := range opts {
		o(s)
	}
	return s
}

// Partitions returns what each partition key served and refused so far.
func (s *Store) Partitions() map[string]Partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Partition, len(s.parts))
	for pk, p := range s.parts {
		out[pk] = p.stats
	}
	return out
}

// Throttled is how many operations were refused so far.
func (s *Store) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.parts {
		n += p.stats.Throttled
	}
	return n
}

// charge is units one operation spends on one partition key.
type charge struct {
	pk          string
	read, write float64
}

// take spends every charge of one operation, or none of them when a
// partition lacks the units: then the operation is throttled.
func (s *Store) take(op string, charges []charge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	need := map[string]*charge{}
	for _, c := range charges {
		n := need[c.pk]
		if n == nil {
			n = &charge{pk: c.pk}
			need[c.pk] = n
		}
		n.read += c.read
		n.write += c.write
	}
	for pk, c := range need {
		p := s.refill(pk, now)
		if !fits(p.read, c.read, s.read) || !fits(p.write, c.write, s.write) {
			p.stats.Throttled++
			return fmt.Errorf("throttlestore: %s: %w: %w", op, store.ErrUnavailable,
				&types.ProvisionedThroughputExceededException{Message: aws.String("partition " + pk + " is out of request units")})
		}
	}
	for pk, c := range need {
		s.spend(pk, c.read, c.write)
	}
	return nil
}

// fits admits units from a bucket that holds them, or from a full one when
// they exceed its size (an item bigger than a second's budget).
func fits(tokens, units, size float64) bool {
	return units == 0 || tokens >= units || tokens >= size
}

func (s *Store) refill(pk string, now time.Time) *partition {
	p := s.parts[pk]
	if p == nil {
		p = &partition{read: s.read, write: s.write, at: now}
		s.parts[pk] = p
		return p
	}
	if dt := now.Sub(p.at).Seconds(); dt > 0 {
		p.read = min(s.read, p.read+dt*s.read)
		p.write = min(s.write, p.write+dt*s.write)
		p.at = now
	}
	return p
}

// spend takes units from pk's buckets; a negative amount gives back what an
// estimate took too much. Called with mu held.
func (s *Store) spend(pk string, read, write float64) {
	p := s.parts[pk]
	p.read -= read
	p.write -= write
	p.stats.ReadUnits += read
	p.stats.WriteUnits += write
}

// settle charges the difference between what an operation took and what it
// turned out to cost.
func (s *Store) settle(pk string, read, write float64) {
	if read == 0 && write == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refill(pk, s.now())
	s.spend(pk, read, write)
}

// known is the size last seen of the item at k (0 if never seen): a read's
// estimate, settled once the item is in hand.
func (s *Store) known(k store.Key) int {
	n, _ := s.sizes.Known(k)
	return n
}

// before is the size of the item at k before a write, read unbilled from
// the inner store when it was never seen, at least floor.
func (s *Store) before(ctx context.Context, k store.Key, floor int) int {
	n, ok := s.sizes.Known(k)
	if !ok {
		if it, err := s.Store.Get(ctx, k); err == nil {
			n = s.sizes.Seen(it)
		}
	}
	return max(n, floor)
}

func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	est := ReadUnits(s.known(k))
	if err := s.take("GetItem", []charge{{pk: k.PK, read: est}}); err != nil {
		return nil, err
	}
	it, err := s.Store.Get(ctx, k)
	if err == nil {
		s.settle(k.PK, ReadUnits(s.sizes.Seen(it))-est, 0)
	}
	return it, err
}

func (s *Store) BatchGet(ctx context.Context, keys []store.Key) (map[string]store.Item, error) {
	charges := make([]charge, len(keys))
	for i, k := range keys {
		charges[i] = charge{pk: k.PK, read: ReadUnits(s.known(k))}
	}
	if err := s.take("BatchGetItem", charges); err != nil {
		return nil, err
	}
	got, err := s.Store.BatchGet(ctx, keys)
	if err == nil {
		for i, k := range keys {
			if it, ok := got[k.String()]; ok {
				s.settle(k.PK, ReadUnits(s.sizes.Seen(it))-charges[i].read, 0)
			}
		}
	}
	return got, err
}

func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if err := s.take("Query", []charge{{pk: q.PK, read: 1}}); err != nil {
		return store.Page{}, err
	}
	page, err := s.Store.Query(ctx, q)
	if err == nil {
		size := 0
		for _, it := range page.Items {
			size += s.sizes.Seen(it)
		}
		s.settle(q.PK, ReadUnits(size)-1, 0)
	}
	return page, err
}

func (s *Store) Put(ctx context.Context, it store.Item, conds ...store.Cond) error {
	k := it.Key()
	if err := s.take("PutItem", []charge{{pk: k.PK, write: WriteUnits(s.before(ctx, k, ItemSize(it)))}}); err != nil {
		return err
	}
	err := s.Store.Put(ctx, it, conds...)
	if err == nil {
		s.sizes.Seen(it)
	}
	return err
}

func (s *Store) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Cond) (store.Item, error) {
	est := WriteUnits(s.before(ctx, k, UpdateSize(k, u)))
	if err := s.take("UpdateItem", []charge{{pk: k.PK, write: est}}); err != nil {
		return nil, err
	}
	it, err := s.Store.Update(ctx, k, u, conds...)
	if err == nil {
		s.settle(k.PK, 0, max(0, WriteUnits(s.sizes.Seen(it))-est))
	}
	return it, err
}

func (s *Store) Delete(ctx context.Context, k store.Key, conds ...store.Cond) error {
	if err := s.take("DeleteItem", []charge{{pk: k.PK, write: WriteUnits(s.before(ctx, k, KeySize(k)))}}); err != nil {
		return err
	}
	err := s.Store.Delete(ctx, k, conds...)
	if err == nil {
		s.sizes.Gone(k)
	}
	return err
}

// Transact charges what the DynamoDB adapter sends as a plain conditional
// write once (dynamostore.SentAlone), and every member of a transaction
// twice.
func (s *Store) Transact(ctx context.Context, ops []store.Op) error {
	per := 2.0
	if dynamostore.SentAlone(ops) {
		per = 1
	}
	charges := make([]charge, len(ops))
	for i, op := range ops {
		size := MemberSize(op, s.before(ctx, op.Key, 0))
		charges[i] = charge{pk: op.Key.PK, write: per * WriteUnits(size)}
	}
	if err := s.take("TransactWriteItems", charges); err != nil {
		return err
	}
	err := s.Store.Transact(ctx, ops)
	if err == nil {
		for _, op := range ops {
			switch op.Kind {
			case store.OpPut:
				s.sizes.Seen(op.Item)
			case store.OpDelete:
				s.sizes.Gone(op.Key)
			}
		}
	}
	return err
}
